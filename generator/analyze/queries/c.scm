; C: definitions with signatures and doc comments, #include imports, calls. Capture contract: see python.scm.

; ---- definitions
(function_definition
  declarator: [
    (function_declarator declarator: (identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
  ]
  body: (compound_statement) @body) @def.function

; prototypes at file level, inside include guards and #if blocks, in `extern "C" { }` and (C++) namespaces:
; what a header declares (a prototype inside a function body is not a definition). One pattern per parent:
; a query cannot say "any of these parents".
(translation_unit
  (declaration
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
    ]) @def.function)
(preproc_ifdef
  (declaration
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
    ]) @def.function)
(preproc_if
  (declaration
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
    ]) @def.function)
(preproc_else
  (declaration
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
    ]) @def.function)
(preproc_elif
  (declaration
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
    ]) @def.function)
(declaration_list
  (declaration
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
    ]) @def.function)
(linkage_specification
  (declaration
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
    ]) @def.function)

(struct_specifier name: (type_identifier) @name body: (field_declaration_list) @body) @def.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list) @body) @def.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list) @body) @def.enum
(type_definition declarator: (type_identifier) @name) @def.type
; `typedef int (*handler)(void *);`, `typedef struct foo *foo_ptr;`
(type_definition declarator: [
  (function_declarator declarator: (parenthesized_declarator (pointer_declarator declarator: (type_identifier) @name)))
  (pointer_declarator declarator: (type_identifier) @name)
  (pointer_declarator declarator: (function_declarator declarator: (parenthesized_declarator (pointer_declarator declarator: (type_identifier) @name))))
  (function_declarator declarator: (type_identifier) @name)
]) @def.type
(preproc_def name: (identifier) @name) @def.macro
(preproc_function_def name: (identifier) @name) @def.macro

; ---- imports
(preproc_include path: [(string_literal) (system_lib_string)] @import.module) @import

; ---- references
(call_expression function: (identifier) @ref.call)
(call_expression function: (field_expression field: (field_identifier) @ref.call))
(type_identifier) @ref.name

; ---- struct and union members, enum constants: shown in a table under the type's section
(struct_specifier body: (field_declaration_list (field_declaration declarator: [
  (field_identifier) @name
  (pointer_declarator declarator: (field_identifier) @name)
  (pointer_declarator declarator: (pointer_declarator declarator: (field_identifier) @name))
  (array_declarator declarator: (field_identifier) @name)
]) @member.field))
(union_specifier body: (field_declaration_list (field_declaration declarator: [
  (field_identifier) @name
  (pointer_declarator declarator: (field_identifier) @name)
  (array_declarator declarator: (field_identifier) @name)
]) @member.field))
(enumerator_list (enumerator name: (identifier) @name) @member.variant)
