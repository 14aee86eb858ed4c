; Go: definitions, imports and references. Capture contract: see python.scm.

; ---- definitions
(function_declaration
  name: (identifier) @name
  body: (block) @body) @def.function

(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @receiver
        (pointer_type (type_identifier) @receiver)
        (generic_type type: (type_identifier) @receiver)
        (pointer_type (generic_type type: (type_identifier) @receiver))
      ]))
  name: (field_identifier) @name
  body: (block) @body) @def.method

(type_spec name: (type_identifier) @name type: (struct_type)) @def.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @def.interface
(type_spec
  name: (type_identifier) @name
  type: [(type_identifier) (qualified_type) (generic_type) (function_type) (map_type) (slice_type)
         (array_type) (pointer_type) (channel_type)]) @def.type
(type_alias name: (type_identifier) @name) @def.type

(method_elem name: (field_identifier) @name) @def.method

(source_file (const_declaration (const_spec name: (identifier) @name) @def.constant))
(source_file (var_declaration (var_spec name: (identifier) @name) @def.variable))

; ---- imports
(import_spec path: [(interpreted_string_literal) (raw_string_literal)] @import.module) @import

; ---- references
(call_expression function: (identifier) @ref.call)
(call_expression function: (selector_expression field: (field_identifier) @ref.call))
; predeclared types are never a symbol of the repository
; (#not-any-of? does not filter in py-tree-sitter 0.26, so the list is a regex)
((type_identifier) @ref.name
  (#not-match? @ref.name "^(any|bool|byte|comparable|complex64|complex128|error|float32|float64|int|int8|int16|int32|int64|rune|string|uint|uint8|uint16|uint32|uint64|uintptr)$"))
(qualified_type name: (type_identifier) @ref.name)
(argument_list (identifier) @ref.name)
