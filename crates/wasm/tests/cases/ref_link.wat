;; module host
(module
  (table $t (export "funcs") 1 8 funcref)
  (table $x (export "things") 2 externref)
  (global (export "current") (mut funcref) (ref.null func))
  (global (export "thing") (mut externref) (ref.null extern))
  (type $t (func (param i32) (result i32)))
  (func (export "call") (param i32 i32) (result i32)
    local.get 1 local.get 0 call_indirect $t (type $t))
  (func (export "call_current") (param i32) (result i32)
    (table.set $t (i32.const 0) (global.get 0))
    (call_indirect $t (type $t) (local.get 0) (i32.const 0)))
  (func (export "size") (result i32) (table.size $t))
  (func (export "thing_is_null") (result i32) (ref.is_null (global.get 1)))
)
;; module plugin
(module
  (import "host" "funcs" (table $t 1 8 funcref))
  (import "host" "things" (table $x 2 externref))
  (import "host" "current" (global $cur (mut funcref)))
  (import "host" "thing" (global $thing (mut externref)))
  (func $square (param i32) (result i32) local.get 0 local.get 0 i32.mul)
  (func $neg (param i32) (result i32) i32.const 0 local.get 0 i32.sub)
  (elem declare func $square $neg)
  ;; grows the host's table by 2 entries holding $neg: the old size
  (func (export "grow") (result i32) (table.grow $t (ref.func $neg) (i32.const 2)))
  (func (export "pick_square") (global.set $cur (ref.func $square)))
  (func (export "copy_thing") (result i32)
    (global.set $thing (table.get $x (i32.const 1)))
    (ref.is_null (global.get $thing)))
)
;; invoke host.size
;; => i32:1
;; invoke host.call i32:0 i32:5
;; => trap: uninitialized element
;; invoke plugin.grow
;; => i32:1
;; invoke host.size
;; => i32:3
;; invoke host.call i32:2 i32:5
;; => i32:-5
;; invoke host.call_current i32:6
;; => trap: uninitialized element
;; invoke plugin.pick_square
;; => void
;; invoke host.call_current i32:6
;; => i32:36
;; invoke plugin.copy_thing
;; => i32:1
;; invoke host.thing_is_null
;; => i32:1
