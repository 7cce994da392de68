;; table.grow keeps a capacity past the length, as a memory does (crates/wasm/src/table.rs,
;; `build_grow`): a growth within it only moves the length and stores the initial value, one
;; past it copies the entries to twice the capacity. Either way the old entries stay, the new
;; ones hold the value given (null or a function), the entries past the length stay out of
;; bounds, and the maximum holds.
(module
  (type $r (func (result i32)))
  (table $t 1 20 funcref)
  (func $f (result i32)
    i32.const 42)
  (elem declare func $f)
  (func (export "grow") (param i32) (result i32)
    (table.grow $t (ref.func $f) (local.get 0)))
  (func (export "grow_null") (param i32) (result i32)
    (table.grow $t (ref.null func) (local.get 0)))
  (func (export "size") (result i32)
    (table.size $t))
  (func (export "is_null") (param i32) (result i32)
    (ref.is_null (table.get $t (local.get 0))))
  (func (export "call") (param i32) (result i32)
    (call_indirect $t (type $r) (local.get 0))))
;; invoke size
;; => i32:1
;; invoke grow_null i32:1
;; => i32:1
;; invoke is_null i32:1
;; => i32:1
;; invoke grow i32:1
;; => i32:2
;; invoke call i32:2
;; => i32:42
;; invoke grow i32:1
;; => i32:3
;; invoke call i32:3
;; => i32:42
;; invoke is_null i32:0
;; => i32:1
;; invoke grow_null i32:1
;; => i32:4
;; invoke is_null i32:4
;; => i32:1
;; invoke grow i32:3
;; => i32:5
;; invoke call i32:7
;; => i32:42
;; invoke is_null i32:8
;; => trap: out of bounds table access
;; invoke grow i32:13
;; => i32:-1
;; invoke grow i32:12
;; => i32:8
;; invoke size
;; => i32:20
;; invoke call i32:19
;; => i32:42
;; invoke is_null i32:5
;; => i32:0
;; invoke call i32:2
;; => i32:42
;; invoke grow i32:1
;; => i32:-1
