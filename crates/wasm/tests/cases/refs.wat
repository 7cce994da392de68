(module
  (type $ii (func (param i32) (result i32)))
  (table $a 2 funcref)
  (table $b 0 10 funcref)
  (table $x 1 externref)
  (table $c 0 funcref)
  (global $g (mut funcref) (ref.null func))
  (func $double (type $ii) local.get 0 i32.const 2 i32.mul)
  (func $inc (type $ii) local.get 0 i32.const 1 i32.add)
  (elem (table $a) (i32.const 0) func $double)
  (elem declare func $inc)
  (func (export "grow_b") (param i32) (result i32)
    (table.grow $b (ref.func $inc) (local.get 0)))
  (func (export "size_b") (result i32) (table.size $b))
  (func (export "call_b") (param i32 i32) (result i32)
    (call_indirect $b (type $ii) (local.get 1) (local.get 0)))
  (func (export "copy_a_to_b")
    (table.copy $b $a (i32.const 0) (i32.const 0) (i32.const 1)))
  (func (export "null_through_global") (result i32)
    (global.set $g (table.get $a (i32.const 1)))
    (ref.is_null (global.get $g)))
  (func (export "func_through_global") (result i32)
    (global.set $g (table.get $a (i32.const 0)))
    (table.set $b (i32.const 1) (global.get $g))
    (ref.is_null (global.get $g)))
  (func (export "extern_null") (result i32)
    (ref.is_null (table.get $x (i32.const 0))))
  ;; a table without a maximum grows to the implementation limit, 2^20 entries, no further
  (func (export "grow_c") (param i32) (result i32)
    (table.grow $c (ref.null func) (local.get 0)))
  (func (export "fill_b") (param i32 i32)
    (table.fill $b (local.get 0) (ref.null func) (local.get 1)))
)
;; invoke size_b
;; => i32:0
;; invoke call_b i32:0 i32:5
;; => trap: undefined element
;; invoke grow_b i32:3
;; => i32:0
;; invoke size_b
;; => i32:3
;; invoke call_b i32:2 i32:5
;; => i32:6
;; invoke grow_b i32:8
;; => i32:-1
;; invoke copy_a_to_b
;; => void
;; invoke call_b i32:0 i32:5
;; => i32:10
;; invoke null_through_global
;; => i32:1
;; invoke func_through_global
;; => i32:0
;; invoke call_b i32:1 i32:7
;; => i32:14
;; invoke fill_b i32:1 i32:3
;; => trap: out of bounds table access
;; invoke fill_b i32:1 i32:2
;; => void
;; invoke call_b i32:2 i32:5
;; => trap: uninitialized element
;; invoke extern_null
;; => i32:1
;; invoke grow_c i32:-1
;; => i32:-1
;; invoke grow_c i32:0x100001
;; => i32:-1
;; invoke grow_c i32:0x100000
;; => i32:0
;; invoke grow_c i32:1
;; => i32:-1
;; invoke grow_c i32:0
;; => i32:1048576
