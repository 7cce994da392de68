;; A library: a counter, a memory with a table of squares, and a sum over it.
(module
  (memory (export "mem") 1)
  (global $count (export "count") (mut i32) (i32.const 0))
  (data (i32.const 0) "\01\02\03\04")
  (func $fill (export "fill") (param $n i32) (local $i i32)
    (block (loop
      local.get $i local.get $n i32.ge_u br_if 1
      local.get $i i32.const 4 i32.mul i32.const 64 i32.add
      local.get $i local.get $i i32.mul
      i32.store
      local.get $i i32.const 1 i32.add local.set $i
      br 0)))
  (func (export "sum") (param $n i32) (result i32) (local $i i32) (local $s i32)
    global.get $count i32.const 1 i32.add global.set $count
    (block (loop
      local.get $i local.get $n i32.ge_u br_if 1
      local.get $s
      local.get $i i32.const 4 i32.mul i32.const 64 i32.add i32.load
      i32.add local.set $s
      local.get $i i32.const 1 i32.add local.set $i
      br 0))
    local.get $s)
)
