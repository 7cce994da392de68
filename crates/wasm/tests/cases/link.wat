;; module lib
(module
  (global $base (export "base") (mut i32) (i32.const 40))
  (global (export "seven") i32 (i32.const 7))
  (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add)
  (func (export "bump") global.get $base i32.const 1 i32.add global.set $base)
)
;; module main
(module
  (import "lib" "add" (func $add (param i32 i32) (result i32)))
  (import "lib" "bump" (func $bump))
  (import "lib" "base" (global $base (mut i32)))
  (import "lib" "seven" (global $seven i32))
  (global $copy i32 (global.get $seven))
  (func (export "run") (result i32)
    call $bump
    global.get $base
    global.get $copy
    call $add)
  (func (export "set") (param i32) local.get 0 global.set $base)
  (export "add_again" (func $add))
  (export "run2" (func 2))
)
;; invoke main.run
;; => i32:48
;; invoke main.run
;; => i32:49
;; invoke main.set i32:100
;; => void
;; invoke lib.bump
;; => void
;; invoke main.run2
;; => i32:109
;; invoke main.add_again i32:1 i32:2
;; => i32:3
