(module
  ;; nested blocks with results, br out of two levels
  (func (export "nested") (param i32) (result i32)
    (block (result i32)
      (block (result i32)
        i32.const 10
        local.get 0
        br_if 1
        drop
        i32.const 20)
      i32.const 1
      i32.add))
  ;; sum 1..n with a loop
  (func (export "sum") (param i32) (result i32) (local i32)
    (block
      (loop
        local.get 0
        i32.eqz
        br_if 1
        local.get 1
        local.get 0
        i32.add
        local.set 1
        local.get 0
        i32.const 1
        i32.sub
        local.set 0
        br 0))
    local.get 1)
  ;; br_table to three targets and a default
  (func (export "table") (param i32) (result i32)
    (block
      (block
        (block
          (block
            local.get 0
            br_table 0 1 2 3)
          i32.const 100
          return)
        i32.const 101
        return)
      i32.const 102
      return)
    i32.const 103)
  ;; if/else with results, and if without else
  (func (export "abs") (param i32) (result i32)
    local.get 0
    i32.const 0
    i32.lt_s
    (if (result i32) (then i32.const 0 local.get 0 i32.sub) (else local.get 0)))
  (func (export "clamp") (param i32) (result i32)
    local.get 0
    i32.const 10
    i32.gt_s
    (if (then i32.const 10 local.set 0))
    local.get 0)
  ;; multi-value: a block with parameters and a function with two results
  (func $divmod (param i32 i32) (result i32 i32)
    local.get 0 local.get 1 i32.div_u
    local.get 0 local.get 1 i32.rem_u)
  (func (export "divmod") (param i32 i32) (result i32 i32)
    local.get 0 local.get 1 call $divmod)
  (func (export "combine") (param i32 i32) (result i32)
    local.get 0 local.get 1 call $divmod
    (block (param i32 i32) (result i32) i32.const 100 i32.mul i32.add))
  ;; a loop with a parameter (multi-value) counting down
  (func (export "countdown") (param i32) (result i32)
    local.get 0
    (loop (param i32) (result i32)
      i32.const 1
      i32.sub
      local.tee 0
      local.get 0
      br_if 0))
  ;; unreachable code after br and return
  (func (export "dead") (param i32) (result i32)
    (block (result i32)
      i32.const 7
      br 0
      i32.const 8
      i32.add
      (block (loop (br 0)))
      unreachable)
    return
    i32.const 9)
  (func (export "unreachable") unreachable)
  ;; local.set inside a loop read after it (SSA: loop-carried value)
  (func (export "fact_loop") (param i64) (result i64) (local i64)
    i64.const 1
    local.set 1
    (block
      (loop
        local.get 0
        i64.const 1
        i64.le_s
        br_if 1
        local.get 1
        local.get 0
        i64.mul
        local.set 1
        local.get 0
        i64.const 1
        i64.sub
        local.set 0
        br 0))
    local.get 1)
)
;; invoke nested i32:0
;; => i32:21
;; invoke nested i32:1
;; => i32:10
;; invoke sum i32:100
;; => i32:5050
;; invoke table i32:0
;; => i32:100
;; invoke table i32:1
;; => i32:101
;; invoke table i32:2
;; => i32:102
;; invoke table i32:3
;; => i32:103
;; invoke table i32:-1
;; => i32:103
;; invoke abs i32:-5
;; => i32:5
;; invoke abs i32:6
;; => i32:6
;; invoke clamp i32:50
;; => i32:10
;; invoke clamp i32:5
;; => i32:5
;; invoke divmod i32:17 i32:5
;; => i32:3 i32:2
;; invoke combine i32:17 i32:5
;; => i32:203
;; invoke countdown i32:5
;; => i32:0
;; invoke dead i32:0
;; => i32:7
;; invoke unreachable
;; => trap: unreachable executed
;; invoke fact_loop i64:20
;; => i64:2432902008176640000
