(module
  (func $fib (export "fib") (param i32) (result i32)
    local.get 0
    i32.const 2
    i32.lt_u
    (if (result i32)
      (then local.get 0)
      (else
        local.get 0 i32.const 1 i32.sub call $fib
        local.get 0 i32.const 2 i32.sub call $fib
        i32.add)))
  (func $fact (export "fact") (param i64) (result i64)
    local.get 0
    i64.eqz
    (if (result i64)
      (then i64.const 1)
      (else local.get 0 local.get 0 i64.const 1 i64.sub call $fact i64.mul)))
  (func $even (export "even") (param i32) (result i32)
    local.get 0 i32.eqz
    (if (result i32) (then i32.const 1) (else local.get 0 i32.const 1 i32.sub call $odd)))
  (func $odd (param i32) (result i32)
    local.get 0 i32.eqz
    (if (result i32) (then i32.const 0) (else local.get 0 i32.const 1 i32.sub call $even)))
  (func $forever (export "forever") (param i32) (result i32) local.get 0 call $forever)
)
;; invoke fib i32:20
;; => i32:6765
;; invoke fact i64:20
;; => i64:2432902008176640000
;; invoke even i32:100
;; => i32:1
;; invoke even i32:7
;; => i32:0
;; invoke forever i32:1
;; => trap: stack overflow (call depth limit 10000)
