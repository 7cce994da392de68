(module
  (type $binop (func (param i32 i32) (result i32)))
  (type $unop (func (param i32) (result i32)))
  (table 5 funcref)
  (elem (i32.const 0) $add $sub $neg)
  (elem (i32.const 4) $mul)
  (func $add (type $binop) local.get 0 local.get 1 i32.add)
  (func $sub (type $binop) local.get 0 local.get 1 i32.sub)
  (func $mul (param i32 i32) (result i32) local.get 0 local.get 1 i32.mul)
  (func $neg (type $unop) i32.const 0 local.get 0 i32.sub)
  (func (export "apply") (param i32 i32 i32) (result i32)
    local.get 1 local.get 2 local.get 0 call_indirect (type $binop))
  (func (export "apply1") (param i32 i32) (result i32)
    local.get 1 local.get 0 call_indirect (type $unop))
)
;; invoke apply i32:0 i32:5 i32:3
;; => i32:8
;; invoke apply i32:1 i32:5 i32:3
;; => i32:2
;; invoke apply i32:4 i32:5 i32:3
;; => i32:15
;; invoke apply1 i32:2 i32:9
;; => i32:-9
;; invoke apply i32:2 i32:5 i32:3
;; => trap: indirect call type mismatch
;; invoke apply1 i32:0 i32:9
;; => trap: indirect call type mismatch
;; invoke apply i32:3 i32:5 i32:3
;; => trap: uninitialized element
;; invoke apply i32:5 i32:5 i32:3
;; => trap: undefined element
;; invoke apply i32:-1 i32:5 i32:3
;; => trap: undefined element
