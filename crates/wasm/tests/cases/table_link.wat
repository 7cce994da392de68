;; module host
(module
  (table (export "table") 4 funcref)
  (type $t (func (param i64) (result i64)))
  (func (export "call") (param i32 i64) (result i64)
    local.get 1 local.get 0 call_indirect (type $t))
)
;; module plugin
(module
  (import "host" "table" (table 4 funcref))
  (elem (i32.const 1) $square $twice)
  (func $square (param i64) (result i64) local.get 0 local.get 0 i64.mul)
  (func $twice (param i64) (result i64) local.get 0 i64.const 2 i64.mul)
  (func (export "call_here") (param i32 i64) (result i64)
    local.get 1 local.get 0 call_indirect (param i64) (result i64))
)
;; invoke host.call i32:1 i64:7
;; => i64:49
;; invoke host.call i32:2 i64:7
;; => i64:14
;; invoke host.call i32:0 i64:7
;; => trap: uninitialized element
;; invoke plugin.call_here i32:2 i64:21
;; => i64:42
