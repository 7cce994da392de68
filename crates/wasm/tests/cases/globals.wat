(module
  (global $counter (export "counter") (mut i32) (i32.const 40))
  (global $k i64 (i64.const 7))
  (global $pi f64 (f64.const 3.5))
  (func (export "bump") (result i32)
    global.get $counter i32.const 1 i32.add global.set $counter global.get $counter)
  (func (export "k") (result i64) global.get $k)
  (func (export "pi") (result f64) global.get $pi)
)
;; invoke bump
;; => i32:41
;; invoke bump
;; => i32:42
;; invoke k
;; => i64:7
;; invoke pi
;; => f64:0x400c000000000000
