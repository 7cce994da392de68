(module
  (func (export "div_s") (param i32 i32) (result i32) local.get 0 local.get 1 i32.div_s)
  (func (export "div_u") (param i32 i32) (result i32) local.get 0 local.get 1 i32.div_u)
  (func (export "rem_s") (param i32 i32) (result i32) local.get 0 local.get 1 i32.rem_s)
  (func (export "rem_u") (param i32 i32) (result i32) local.get 0 local.get 1 i32.rem_u)
  (func (export "rem_s64") (param i64 i64) (result i64) local.get 0 local.get 1 i64.rem_s)
  (func (export "div_s64") (param i64 i64) (result i64) local.get 0 local.get 1 i64.div_s)
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
