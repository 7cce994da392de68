(module
  (func (export "add") (param f64 f64) (result f64) local.get 0 local.get 1 f64.add)
  (func (export "div32") (param f32 f32) (result f32) local.get 0 local.get 1 f32.div)
  (func (export "neg") (param f32) (result f32) local.get 0 f32.neg)
  (func (export "abs") (param f64) (result f64) local.get 0 f64.abs)
  (func (export "copysign") (param f32 f32) (result f32) local.get 0 local.get 1 f32.copysign)
  (func (export "min") (param f64 f64) (result f64) local.get 0 local.get 1 f64.min)
  (func (export "max") (param f32 f32) (result f32) local.get 0 local.get 1 f32.max)
  (func (export "lt") (param f64 f64) (result i32) local.get 0 local.get 1 f64.lt)
  (func (export "ne") (param f64 f64) (result i32) local.get 0 local.get 1 f64.ne)
  (func (export "trunc_s") (param f32) (result i32) local.get 0 i32.trunc_f32_s)
  (func (export "trunc_u") (param f64) (result i32) local.get 0 i32.trunc_f64_u)
  (func (export "trunc_s64") (param f64) (result i64) local.get 0 i64.trunc_f64_s)
  (func (export "trunc_sat_s") (param f32) (result i32) local.get 0 i32.trunc_sat_f32_s)
  (func (export "trunc_sat_u64") (param f64) (result i64) local.get 0 i64.trunc_sat_f64_u)
  (func (export "convert_u") (param i32) (result f32) local.get 0 f32.convert_i32_u)
  (func (export "convert_s64") (param i64) (result f64) local.get 0 f64.convert_i64_s)
  (func (export "demote") (param f64) (result f32) local.get 0 f32.demote_f64)
  (func (export "promote") (param f32) (result f64) local.get 0 f64.promote_f32)
  (func (export "reinterpret") (param f32) (result i32) local.get 0 i32.reinterpret_f32)
  (func (export "from_bits") (param i64) (result f64) local.get 0 f64.reinterpret_i64)
)
;; invoke add f64:1.5 f64:2.25
;; => f64:0x400e000000000000
;; invoke div32 f32:1 f32:0
;; => f32:0x7f800000
;; invoke div32 f32:0 f32:0
;; => f32:0x7fc00000
;; invoke neg f32:0x7fc00001
;; => f32:0xffc00001
;; invoke neg f32:0
;; => f32:0x80000000
;; invoke abs f64:-0
;; => f64:0x0000000000000000
;; invoke copysign f32:3 f32:-0
;; => f32:0xc0400000
;; invoke min f64:0 f64:-0
;; => f64:0x8000000000000000
;; invoke min f64:-0 f64:0
;; => f64:0x8000000000000000
;; invoke min f64:1 f64:2
;; => f64:0x3ff0000000000000
;; invoke min f64:0x7ff8000000000000 f64:2
;; => f64:0x7ff8000000000000
;; invoke max f32:0 f32:-0
;; => f32:0x00000000
;; invoke max f32:-1 f32:-2
;; => f32:0xbf800000
;; invoke max f32:1 f32:0x7fc00000
;; => f32:0x7fc00000
;; invoke lt f64:1 f64:2
;; => i32:1
;; invoke lt f64:0x7ff8000000000000 f64:2
;; => i32:0
;; invoke ne f64:0x7ff8000000000000 f64:0x7ff8000000000000
;; => i32:1
;; invoke trunc_s f32:-2147483648
;; => i32:-2147483648
;; invoke trunc_s f32:2147483648
;; => trap: integer overflow
;; invoke trunc_s f32:-2147483904
;; => trap: integer overflow
;; invoke trunc_s f32:-3.9
;; => i32:-3
;; invoke trunc_s f32:0x7fc00000
;; => trap: invalid conversion to integer
;; invoke trunc_u f64:4294967295.9
;; => i32:-1
;; invoke trunc_u f64:4294967296
;; => trap: integer overflow
;; invoke trunc_u f64:-0.99
;; => i32:0
;; invoke trunc_u f64:-1
;; => trap: integer overflow
;; invoke trunc_s64 f64:-9223372036854775808
;; => i64:-9223372036854775808
;; invoke trunc_s64 f64:9223372036854775808
;; => trap: integer overflow
;; invoke trunc_sat_s f32:1e20
;; => i32:2147483647
;; invoke trunc_sat_s f32:0x7fc00000
;; => i32:0
;; invoke trunc_sat_u64 f64:-5
;; => i64:0
;; invoke trunc_sat_u64 f64:1e30
;; => i64:-1
;; invoke convert_u i32:-1
;; => f32:0x4f800000
;; invoke convert_s64 i64:-1
;; => f64:0xbff0000000000000
;; invoke demote f64:0.1
;; => f32:0x3dcccccd
;; invoke promote f32:0.1
;; => f64:0x3fb99999a0000000
;; invoke reinterpret f32:-0
;; => i32:-2147483648
;; invoke from_bits i64:0x3ff0000000000000
;; => f64:0x3ff0000000000000
