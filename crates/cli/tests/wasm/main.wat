;; The program: fills the library's table, sums it, adds the data bytes and the call count, and
;; calls through its own table.
(module
  (import "lib" "mem" (memory 1))
  (import "lib" "fill" (func $fill (param i32)))
  (import "lib" "sum" (func $sum (param i32) (result i32)))
  (import "lib" "count" (global $count (mut i32)))
  (table 2 funcref)
  (elem (i32.const 0) $grow_twice $zero)
  (func $zero (result i32) i32.const 0)
  (func $grow_twice (result i32)
    i32.const 1 memory.grow drop
    i32.const 1 memory.grow)
  (func (export "run") (result i32)
    i32.const 5 call $fill
    i32.const 5 call $sum          ;; 0+1+4+9+16 = 30
    i32.const 0 i32.load8_u i32.add ;; + 1
    i32.const 3 i32.load8_u i32.add ;; + 4
    global.get $count i32.add      ;; + 1
    i32.const 0 call_indirect (result i32) i32.add ;; $grow_twice: + 2 (pages before the second grow)
    i32.const 1 call_indirect (result i32) i32.add ;; $zero
    i32.const 131072 i32.load i32.add) ;; + 0 (the last page is zeroed)
  (func (export "oob") (result i32)
    i32.const 65536 i32.load)
)
