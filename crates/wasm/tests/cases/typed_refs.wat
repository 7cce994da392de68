(module
  ;; Typed function references (WebAssembly 3.0): call_ref through a (ref $t), ref.as_non_null,
  ;; br_on_null and br_on_non_null, non-nullable locals, and a table whose entries start as a
  ;; table initializer expression says.
  (type $binop (func (param i32 i32) (result i32)))
  (func $add (type $binop) (i32.add (local.get 0) (local.get 1)))
  (func $sub (type $binop) (i32.sub (local.get 0) (local.get 1)))
  (elem declare func $add $sub)
  (table $ops 3 (ref null $binop) (ref.func $sub))
  (func (export "apply") (param $which i32) (param $x i32) (param $y i32) (result i32)
    (local $f (ref $binop))
    (local.set $f (select (result (ref $binop)) (ref.func $add) (ref.func $sub) (local.get $which)))
    (call_ref $binop (local.get $x) (local.get $y) (local.get $f)))
  (func (export "call_null") (result i32)
    (call_ref $binop (i32.const 1) (i32.const 2) (ref.null $binop)))
  (func (export "non_null") (param $null i32) (result i32)
    (ref.is_null
      (ref.as_non_null
        (select (result (ref null $binop)) (ref.null $binop) (ref.func $add) (local.get $null)))))
  ;; 1 when the reference is null (br_on_null jumps), else the call's result.
  (func (export "or_one") (param $null i32) (result i32)
    (block $is_null
      (return
        (call_ref $binop (i32.const 40) (i32.const 2)
          (br_on_null $is_null
            (select (result (ref null $binop)) (ref.null $binop) (ref.func $add) (local.get $null))))))
    (i32.const 1))
  ;; The call's result when the reference is not null (br_on_non_null jumps), else 7.
  (func (export "or_seven") (param $null i32) (result i32)
    (call_ref $binop (i32.const 50) (i32.const 8)
      (block $has (result (ref $binop))
        (br_on_non_null $has
          (select (result (ref null $binop)) (ref.null $binop) (ref.func $sub) (local.get $null)))
        (return (i32.const 7)))))
  (func (export "from_table") (param $i i32) (result i32)
    (call_indirect $ops (type $binop) (i32.const 10) (i32.const 3) (local.get $i)))
)
;; invoke apply i32:1 i32:40 i32:2
;; => i32:42
;; invoke apply i32:0 i32:40 i32:2
;; => i32:38
;; invoke call_null
;; => trap: null function reference
;; invoke non_null i32:0
;; => i32:0
;; invoke non_null i32:1
;; => trap: null reference
;; invoke or_one i32:0
;; => i32:42
;; invoke or_one i32:1
;; => i32:1
;; invoke or_seven i32:0
;; => i32:42
;; invoke or_seven i32:1
;; => i32:7
;; invoke from_table i32:2
;; => i32:7
