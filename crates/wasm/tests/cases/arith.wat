(module
  (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add)
  (func (export "sub64") (param i64 i64) (result i64) local.get 0 local.get 1 i64.sub)
  (func (export "mul") (param i32 i32) (result i32) local.get 0 local.get 1 i32.mul)
  (func (export "shl") (param i32 i32) (result i32) local.get 0 local.get 1 i32.shl)
  (func (export "shr_s") (param i32 i32) (result i32) local.get 0 local.get 1 i32.shr_s)
  (func (export "shr_u") (param i32 i32) (result i32) local.get 0 local.get 1 i32.shr_u)
  (func (export "rotl") (param i32 i32) (result i32) local.get 0 local.get 1 i32.rotl)
  (func (export "rotr64") (param i64 i64) (result i64) local.get 0 local.get 1 i64.rotr)
  (func (export "clz") (param i32) (result i32) local.get 0 i32.clz)
  (func (export "ctz64") (param i64) (result i64) local.get 0 i64.ctz)
  (func (export "popcnt") (param i32) (result i32) local.get 0 i32.popcnt)
  (func (export "popcnt64") (param i64) (result i64) local.get 0 i64.popcnt)
  (func (export "clz64") (param i64) (result i64) local.get 0 i64.clz)
  (func (export "eqz") (param i64) (result i32) local.get 0 i64.eqz)
  (func (export "lt_u") (param i32 i32) (result i32) local.get 0 local.get 1 i32.lt_u)
  (func (export "ge_s") (param i32 i32) (result i32) local.get 0 local.get 1 i32.ge_s)
  (func (export "ext8") (param i32) (result i32) local.get 0 i32.extend8_s)
  (func (export "ext32") (param i64) (result i64) local.get 0 i64.extend32_s)
  (func (export "wrap") (param i64) (result i32) local.get 0 i32.wrap_i64)
  (func (export "extend_u") (param i32) (result i64) local.get 0 i64.extend_i32_u)
  (func (export "select") (param i32 i32 i32) (result i32) local.get 0 local.get 1 local.get 2 select)
)
;; invoke add i32:2 i32:40
;; => i32:42
;; invoke add i32:0x7fffffff i32:1
;; => i32:-2147483648
;; invoke sub64 i64:0 i64:1
;; => i64:-1
;; invoke mul i32:65536 i32:65536
;; => i32:0
;; invoke shl i32:1 i32:33
;; => i32:2
;; invoke shr_s i32:-8 i32:1
;; => i32:-4
;; invoke shr_u i32:-8 i32:1
;; => i32:2147483644
;; invoke rotl i32:0x80000001 i32:1
;; => i32:3
;; invoke rotl i32:0x12345678 i32:0
;; => i32:305419896
;; invoke rotr64 i64:1 i64:1
;; => i64:-9223372036854775808
;; invoke rotl i32:0x80000001 i32:32
;; => i32:-2147483647
;; invoke rotl i32:0x80000001 i32:-1
;; => i32:-1073741824
;; invoke rotr64 i64:1 i64:65
;; => i64:-9223372036854775808
;; invoke clz i32:0
;; => i32:32
;; invoke clz i32:1
;; => i32:31
;; invoke clz i32:0x00ff0000
;; => i32:8
;; invoke ctz64 i64:0
;; => i64:64
;; invoke ctz64 i64:0x100
;; => i64:8
;; invoke popcnt i32:-1
;; => i32:32
;; invoke popcnt i32:0x01010101
;; => i32:4
;; invoke popcnt64 i64:-1
;; => i64:64
;; invoke clz64 i64:1
;; => i64:63
;; invoke eqz i64:0
;; => i32:1
;; invoke eqz i64:5
;; => i32:0
;; invoke lt_u i32:-1 i32:1
;; => i32:0
;; invoke ge_s i32:-1 i32:1
;; => i32:0
;; invoke ext8 i32:0x80
;; => i32:-128
;; invoke ext32 i64:0xffffffff
;; => i64:-1
;; invoke wrap i64:0x100000005
;; => i32:5
;; invoke extend_u i32:-1
;; => i64:4294967295
;; invoke select i32:1 i32:2 i32:0
;; => i32:2
;; invoke select i32:1 i32:2 i32:7
;; => i32:1
