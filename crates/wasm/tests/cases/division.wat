(module
  (func (export "div_s") (param i32 i32) (result i32) local.get 0 local.get 1 i32.div_s)
  (func (export "div_u") (param i32 i32) (result i32) local.get 0 local.get 1 i32.div_u)
  (func (export "rem_s") (param i32 i32) (result i32) local.get 0 local.get 1 i32.rem_s)
  (func (export "rem_u") (param i32 i32) (result i32) local.get 0 local.get 1 i32.rem_u)
  (func (export "rem_s64") (param i64 i64) (result i64) local.get 0 local.get 1 i64.rem_s)
  (func (export "div_s64") (param i64 i64) (result i64) local.get 0 local.get 1 i64.div_s)
  ;; constant divisors: -1 is 0 without a test, 0 still traps, any other is the IR's srem
  (func (export "rem_s_by_m1") (param i32) (result i32) local.get 0 i32.const -1 i32.rem_s)
  (func (export "rem_s_by_0") (param i32) (result i32) local.get 0 i32.const 0 i32.rem_s)
  (func (export "rem_s_by_10") (param i32) (result i32) local.get 0 i32.const 10 i32.rem_s)
  (func (export "rem_s64_by_m1") (param i64) (result i64) local.get 0 i64.const -1 i64.rem_s)
  (func (export "rem_s64_by_min") (param i64) (result i64)
    local.get 0 i64.const -9223372036854775808 i64.rem_s)
)
;; invoke div_s i32:-7 i32:2
;; => i32:-3
;; invoke div_s i32:1 i32:0
;; => trap: integer division by zero
;; invoke div_s i32:-2147483648 i32:-1
;; => trap: integer overflow (MIN / -1)
;; invoke div_u i32:-1 i32:2
;; => i32:2147483647
;; invoke div_u i32:1 i32:0
;; => trap: integer division by zero
;; invoke rem_s i32:-7 i32:2
;; => i32:-1
;; invoke rem_s i32:-2147483648 i32:-1
;; => i32:0
;; invoke rem_s i32:5 i32:0
;; => trap: integer division by zero
;; invoke rem_u i32:-1 i32:10
;; => i32:5
;; invoke rem_s64 i64:-9223372036854775808 i64:-1
;; => i64:0
;; invoke rem_s64 i64:7 i64:-3
;; => i64:1
;; invoke div_s64 i64:-9223372036854775808 i64:-1
;; => trap: integer overflow (MIN / -1)
;; invoke rem_s_by_m1 i32:-2147483648
;; => i32:0
;; invoke rem_s_by_m1 i32:7
;; => i32:0
;; invoke rem_s_by_0 i32:7
;; => trap: integer division by zero
;; invoke rem_s_by_10 i32:-2147483648
;; => i32:-8
;; invoke rem_s_by_10 i32:1234
;; => i32:4
;; invoke rem_s64_by_m1 i64:-9223372036854775808
;; => i64:0
;; invoke rem_s64_by_min i64:-9223372036854775808
;; => i64:0
;; invoke rem_s64_by_min i64:-5
;; => i64:-5
