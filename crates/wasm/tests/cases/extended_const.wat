(module
  ;; Extended constant expressions (WebAssembly 3.0): i32/i64 add, sub and mul in global
  ;; initializers and segment offsets, computed by the module's initializer, wrapping.
  (global $b i32 (i32.add (i32.const 40) (i32.mul (i32.const 1) (i32.const 2))))
  (global $c (mut i64) (i64.sub (i64.const 10) (i64.mul (i64.const 3) (i64.const -1))))
  (global $w i32 (i32.mul (i32.const 0x10000) (i32.const 0x10001)))
  (memory 1)
  (data (i32.add (i32.const 40) (i32.const 2)) "\2a")
  (func (export "b") (result i32) global.get $b)
  (func (export "c") (result i64) global.get $c)
  (func (export "w") (result i32) global.get $w)
  (func (export "byte") (result i32) i32.const 42 i32.load8_u)
)
;; invoke b
;; => i32:42
;; invoke c
;; => i64:13
;; invoke w
;; => i32:65536
;; invoke byte
;; => i32:42
