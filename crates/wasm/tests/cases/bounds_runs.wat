;; A run of accesses from one base address (`b + 0`, `b + 8`, `b + 16`, as compiled C
;; addresses an array), each a `mem_load`/`mem_store` the back end checks: it traps exactly
;; when one of its accesses is out of bounds, never when an i32 address wraps around into the
;; memory, and a store before an access out of bounds is done.
(module
  (memory (export "mem") 1)
  (data (i32.const 0) "\01\00\00\00\00\00\00\00\02\00\00\00\00\00\00\00")
  (data (i32.const 65512) "\03\00\00\00\00\00\00\00\04\00\00\00\00\00\00\00\05\00\00\00\00\00\00\00")
  ;; x[b] + x[b+8] * 10 + x[b+16] * 100, with the i32 additions clang writes.
  (func (export "sum3") (param $b i32) (result i64)
    local.get $b
    i64.load
    local.get $b
    i32.const 8
    i32.add
    i64.load
    i64.const 10
    i64.mul
    i64.add
    local.get $b
    i32.const 16
    i32.add
    i64.load
    i64.const 100
    i64.mul
    i64.add)
  ;; Two bases interleaved, and a static offset.
  (func (export "two_bases") (param $p i32) (param $q i32) (result i32)
    local.get $p
    i32.load
    local.get $q
    i32.const 4
    i32.add
    i32.load
    i32.add
    local.get $p
    i32.const 8
    i32.add
    i32.load offset=4
    i32.add
    local.get $q
    i32.load8_u
    i32.add)
  ;; A store, then loads: the store is done even when a load traps.
  (func (export "store_then_load") (param $b i32) (param $v i32) (result i32)
    i32.const 32
    local.get $v
    i32.store
    local.get $b
    i32.load
    local.get $b
    i32.const 4
    i32.add
    i32.load
    i32.add)
  ;; b + 8 and b + 16 only: with b = -8 they wrap around to 0 and 8, inside the memory.
  (func (export "wrapped") (param $b i32) (result i64)
    local.get $b
    i32.const 8
    i32.add
    i64.load
    local.get $b
    i32.const 16
    i32.add
    i64.load
    i64.const 10
    i64.mul
    i64.add)
  (func (export "at") (param i32) (result i32) local.get 0 i32.load)
)
;; invoke sum3 i32:0
;; => i64:21
;; invoke sum3 i32:65512
;; => i64:543
;; invoke sum3 i32:65513
;; => trap: out of bounds memory access
;; invoke sum3 i32:65528
;; => trap: out of bounds memory access
;; invoke sum3 i32:-8
;; => trap: out of bounds memory access
;; invoke sum3 i32:-16
;; => trap: out of bounds memory access
;; invoke two_bases i32:0 i32:0
;; => i32:2
;; invoke two_bases i32:65524 i32:0
;; => trap: out of bounds memory access
;; invoke two_bases i32:0 i32:65532
;; => trap: out of bounds memory access
;; invoke store_then_load i32:65534 i32:77
;; => trap: out of bounds memory access
;; invoke at i32:32
;; => i32:77
;; invoke wrapped i32:-8
;; => i64:21
;; invoke wrapped i32:-12
;; => trap: out of bounds memory access
;; invoke wrapped i32:65504
;; => i64:43
;; invoke wrapped i32:65512
;; => i64:54
;; invoke wrapped i32:65513
;; => trap: out of bounds memory access
