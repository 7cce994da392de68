(module
  (memory (export "mem") 1 3)
  (data (i32.const 16) "hello\00\01\02")
  (data (i32.const 65530) "\ff\fe")
  (func (export "load8_u") (param i32) (result i32) local.get 0 i32.load8_u)
  (func (export "load8_s") (param i32) (result i32) local.get 0 i32.load8_s)
  (func (export "load16_s") (param i32) (result i32) local.get 0 i32.load16_s)
  (func (export "load") (param i32) (result i32) local.get 0 i32.load)
  (func (export "load_off") (param i32) (result i32) local.get 0 i32.load offset=4)
  (func (export "load64") (param i32) (result i64) local.get 0 i64.load)
  (func (export "load32_s") (param i32) (result i64) local.get 0 i64.load32_s)
  (func (export "store") (param i32 i32) local.get 0 local.get 1 i32.store)
  (func (export "store8") (param i32 i32) local.get 0 local.get 1 i32.store8)
  (func (export "store_f64") (param i32 f64) local.get 0 local.get 1 f64.store)
  (func (export "load_f64") (param i32) (result f64) local.get 0 f64.load)
  (func (export "size") (result i32) memory.size)
  (func (export "grow") (param i32) (result i32) local.get 0 memory.grow)
)
;; invoke load8_u i32:16
;; => i32:104
;; invoke load8_s i32:65530
;; => i32:-1
;; invoke load16_s i32:65530
;; => i32:-257
;; invoke load i32:16
;; => i32:1819043176
;; invoke load_off i32:16
;; => i32:33620079
;; invoke load64 i32:16
;; => i64:144397141612979560
;; invoke load32_s i32:65530
;; => i64:65279
;; invoke load i32:65532
;; => i32:0
;; invoke load i32:65533
;; => trap: out of bounds memory access
;; invoke load i32:-1
;; => trap: out of bounds memory access
;; invoke load_off i32:65532
;; => trap: out of bounds memory access
;; invoke load8_u i32:65536
;; => trap: out of bounds memory access
;; invoke store i32:100 i32:0x12345678
;; => void
;; invoke load8_u i32:100
;; => i32:120
;; invoke load i32:100
;; => i32:305419896
;; invoke store8 i32:101 i32:0xaabb
;; => void
;; invoke load i32:100
;; => i32:305445752
;; invoke store i32:65533 i32:1
;; => trap: out of bounds memory access
;; invoke store_f64 i32:200 f64:-2.5
;; => void
;; invoke load_f64 i32:200
;; => f64:0xc004000000000000
;; invoke size
;; => i32:1
;; invoke grow i32:1
;; => i32:1
;; invoke size
;; => i32:2
;; invoke load i32:100
;; => i32:305445752
;; invoke load i32:131068
;; => i32:0
;; invoke store i32:131000 i32:99
;; => void
;; invoke load i32:131000
;; => i32:99
;; invoke load i32:131072
;; => trap: out of bounds memory access
;; invoke grow i32:2
;; => i32:-1
;; invoke grow i32:1
;; => i32:2
;; invoke grow i32:0
;; => i32:3
;; invoke size
;; => i32:3
;; invoke load8_u i32:196607
;; => i32:0
;; invoke grow i32:-1
;; => i32:-1
