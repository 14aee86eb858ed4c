; C: definitions with signatures and doc comments, #include imports, calls. Capture contract: see python.scm.

; ---- definitions
(function_definition
  declarator: [
    (function_declarator declarator: (identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
  ]
  body: (compound_statement) @body) @def.function

; prototypes at file level: what a header declares
(translation_unit
  (declaration
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    ]) @def.function)

(struct_specifier name: (type_identifier) @name body: (field_declaration_list) @body) @def.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list) @body) @def.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list) @body) @def.enum
(type_definition declarator: (type_identifier) @name) @def.type
(preproc_def name: (identifier) @name) @def.macro
(preproc_function_def name: (identifier) @name) @def.macro

; ---- imports
(preproc_include path: [(string_literal) (system_lib_string)] @import.module) @import

; ---- references
(call_expression function: (identifier) @ref.call)
(call_expression function: (field_expression field: (field_identifier) @ref.call))
(type_identifier) @ref.name
