(module
  ;; Tail calls (WebAssembly 3.0): return_call, return_call_indirect and return_call_ref run
  ;; 100,000 calls deep under the scripts' call depth limit of 10,000 (each replaces its
  ;; caller's activation); several results pass through a tail call; the indirect forms check
  ;; as call_indirect and call_ref do.
  (type $pred (func (param i64) (result i32)))
  (type $pair (func (param i32 i32) (result i32 i32)))
  (table $t 2 funcref)
  (elem (table $t) (i32.const 0) func $even $odd)
  (elem declare func $odd_ref)
  (func $even (type $pred)
    (if (result i32) (i64.eqz (local.get 0))
      (then (i32.const 1))
      (else (return_call $odd (i64.sub (local.get 0) (i64.const 1))))))
  (func $odd (type $pred)
    (if (result i32) (i64.eqz (local.get 0))
      (then (i32.const 0))
      (else
        (return_call_indirect $t (type $pred) (i64.sub (local.get 0) (i64.const 1)) (i32.const 0)))))
  (func $even_ref (type $pred)
    (if (result i32) (i64.eqz (local.get 0))
      (then (i32.const 1))
      (else (return_call_ref $pred (i64.sub (local.get 0) (i64.const 1)) (ref.func $odd_ref)))))
  (func $odd_ref (type $pred)
    (if (result i32) (i64.eqz (local.get 0))
      (then (i32.const 0))
      (else (return_call $even_ref (i64.sub (local.get 0) (i64.const 1))))))
  (func $swap (type $pair) (local.get 1) (local.get 0))
  (func (export "even") (param i64) (result i32) (return_call $even (local.get 0)))
  (func (export "even_ref") (param i64) (result i32) (return_call $even_ref (local.get 0)))
  (func (export "swap") (param i32 i32) (result i32 i32)
    (return_call $swap (local.get 0) (local.get 1)))
  (func (export "bad_index") (result i32)
    (return_call_indirect $t (type $pred) (i64.const 1) (i32.const 5)))
  (func (export "wrong_type") (result i32 i32)
    (return_call_indirect $t (type $pair) (i32.const 1) (i32.const 2) (i32.const 0)))
  (func (export "null_ref") (result i32)
    (return_call_ref $pred (i64.const 1) (ref.null $pred)))
)
;; invoke even i64:100000
;; => i32:1
;; invoke even i64:100001
;; => i32:0
;; invoke even_ref i64:100001
;; => i32:0
;; invoke swap i32:1 i32:2
;; => i32:2 i32:1
;; invoke bad_index
;; => trap: undefined element
;; invoke wrong_type
;; => trap: indirect call type mismatch
;; invoke null_ref
;; => trap: null function reference
