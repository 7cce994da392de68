;; module Mg
(module
  (global $glob (export "glob") (export "glob2") (mut i32) (i32.const 42))
  (func $get (export "get") (export "get2") (result i32) global.get $glob)
  (func (export "set") (param i32) local.get 0 global.set $glob)
)
;; module Ng
(module
  (global $x (import "Mg" "glob") (mut i32))
  (func $get (import "Mg" "get") (result i32))
  (export "Mg.glob" (global $x))
  (export "Mg.get" (func $get))
  (func (export "bump") global.get $x i32.const 1 i32.add global.set $x)
)
;; module user
(module
  (global $y (import "Ng" "Mg.glob") (mut i32))
  (global $z (import "Mg" "glob2") (mut i32))
  (func $get (import "Ng" "Mg.get") (result i32))
  (func (export "read") (result i32) global.get $y)
  (func (export "write") (param i32) local.get 0 global.set $y)
  (func (export "sum") (result i32) global.get $z call $get i32.add)
)
;; invoke user.read
;; => i32:42
;; invoke Ng.bump
;; => void
;; invoke Mg.get2
;; => i32:43
;; invoke user.write i32:100
;; => void
;; invoke Mg.get
;; => i32:100
;; invoke Ng.Mg.get
;; => i32:100
;; invoke user.sum
;; => i32:200
;; invoke Mg.set i32:5
;; => void
;; invoke user.read
;; => i32:5
