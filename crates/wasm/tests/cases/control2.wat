(module
  ;; an if with a parameter and two results
  (func (export "if_params") (param i32 i32) (result i32)
    local.get 1
    local.get 0
    (if (param i32) (result i32 i32)
      (then i32.const 10 i32.mul i32.const 1)
      (else i32.const 2))
    i32.add)
  ;; an if with a parameter and no else: the parameter passes through
  (func (export "if_no_else") (param i32 i32) (result i32)
    local.get 1
    local.get 0
    (if (param i32) (result i32) (then i32.const 100 i32.add)))
  ;; br_if carrying a value out of a block, the value also left for the fallthrough
  (func (export "br_if_value") (param i32) (result i32)
    (block (result i32)
      i32.const 5
      local.get 0
      br_if 0
      i32.const 1
      i32.add))
  ;; br_table carrying a value to blocks and to a loop with a parameter
  (func (export "br_table_loop") (param i32) (result i32) (local $n i32)
    i32.const 0
    (loop $l (param i32) (result i32)
      i32.const 3
      i32.add
      local.get $n
      i32.const 1
      i32.add
      local.tee $n
      local.get 0
      i32.lt_u
      br_if $l)
    (block (param i32) (result i32)
      (block (param i32) (result i32)
        local.get 0
        br_table 0 1)
      i32.const 1000
      i32.add))
  ;; locals changed on some paths only, read after a join inside a loop
  (func (export "collatz") (param i32) (result i32) (local $steps i32)
    (block
      (loop
        local.get 0
        i32.const 1
        i32.eq
        br_if 1
        local.get 0
        i32.const 1
        i32.and
        (if
          (then local.get 0 i32.const 3 i32.mul i32.const 1 i32.add local.set 0)
          (else local.get 0 i32.const 1 i32.shr_u local.set 0))
        local.get $steps
        i32.const 1
        i32.add
        local.set $steps
        br 0))
    local.get $steps)
  ;; nested loops with a break from the inner one to the outer's end
  (func (export "pairs") (param i32) (result i32) (local $i i32) (local $j i32) (local $c i32)
    (block $done
      (loop $outer
        local.get $i local.get 0 i32.ge_u br_if $done
        i32.const 0 local.set $j
        (block $next
          (loop $inner
            local.get $j local.get $i i32.ge_u br_if $next
            local.get $c i32.const 1 i32.add local.set $c
            local.get $c i32.const 1000 i32.gt_u br_if $done
            local.get $j i32.const 1 i32.add local.set $j
            br $inner))
        local.get $i i32.const 1 i32.add local.set $i
        br $outer))
    local.get $c)
  ;; a start function sets a global
  (global $g (mut i32) (i32.const 1))
  (func $start global.get $g i32.const 41 i32.add global.set $g)
  (start $start)
  (func (export "started") (result i32) global.get $g)
)
;; invoke if_params i32:1 i32:4
;; => i32:41
;; invoke if_params i32:0 i32:4
;; => i32:6
;; invoke if_no_else i32:1 i32:4
;; => i32:104
;; invoke if_no_else i32:0 i32:4
;; => i32:4
;; invoke br_if_value i32:1
;; => i32:5
;; invoke br_if_value i32:0
;; => i32:6
;; invoke br_table_loop i32:0
;; => i32:1003
;; invoke br_table_loop i32:1
;; => i32:3
;; invoke br_table_loop i32:4
;; => i32:12
;; invoke collatz i32:27
;; => i32:111
;; invoke pairs i32:10
;; => i32:45
;; invoke pairs i32:100
;; => i32:1001
;; invoke started
;; => i32:42
