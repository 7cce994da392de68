/* Names across wasm modules: an export of this module, an import from another. Compiled
   natively (cc -O2, to compare run times), both are plain C declarations. */
#ifndef WASM_H
#define WASM_H
#ifdef __wasm__
#define EXPORT(name) __attribute__((export_name(name)))
#define IMPORT(module, name) __attribute__((import_module(module), import_name(name)))
#else
#define EXPORT(name)
#define IMPORT(module, name)
#endif
#endif
