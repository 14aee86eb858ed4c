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

; every name of `const A, B = 1, 2` (the grammar gives the field `name` to the first only)
(source_file (const_declaration (const_spec (identifier) @name) @def.constant))
(source_file (var_declaration (var_spec name: (identifier) @name) @def.variable))

; ---- imports
(import_spec name: (_)? @import.alias path: [(interpreted_string_literal) (raw_string_literal)] @import.module) @import

; ---- references
(call_expression function: (identifier) @ref.call)
(call_expression function: (selector_expression field: (field_identifier) @ref.call))
; predeclared types are never a symbol of the repository
; (#not-any-of? does not filter in py-tree-sitter 0.26, so the list is a regex)
((type_identifier) @ref.name
  (#not-match? @ref.name "^(any|bool|byte|comparable|complex64|complex128|error|float32|float64|int|int8|int16|int32|int64|rune|string|uint|uint8|uint16|uint32|uint64|uintptr)$"))
(qualified_type name: (type_identifier) @ref.name)
(argument_list (identifier) @ref.name)

; ---- bindings: the type a name holds (receivers, parameters, struct fields, `var x T`, `x := T{}`,
; `x := f()`, `x := y.(*T)`) and what a function returns; the call graph follows them (references.py)
(parameter_declaration
  name: (identifier) @bind.name
  type: [(type_identifier) @bind.type (qualified_type) @bind.type
         (pointer_type [(type_identifier) (qualified_type)] @bind.type)
         (generic_type type: (type_identifier) @bind.type)
         (pointer_type (generic_type type: (type_identifier) @bind.type))])
(field_declaration
  name: (field_identifier) @bind.name
  type: [(type_identifier) @bind.type (qualified_type) @bind.type
         (pointer_type [(type_identifier) (qualified_type)] @bind.type)
         (generic_type type: (type_identifier) @bind.type)
         (pointer_type (generic_type type: (type_identifier) @bind.type))])
(var_spec
  name: (identifier) @bind.name
  type: [(type_identifier) @bind.type (qualified_type) @bind.type
         (pointer_type [(type_identifier) (qualified_type)] @bind.type)])
(short_var_declaration
  left: (expression_list . (identifier) @bind.name)
  right: (expression_list .
    [(composite_literal type: [(type_identifier) (qualified_type)] @bind.type)
     (unary_expression operand: (composite_literal type: [(type_identifier) (qualified_type)] @bind.type))
     (type_assertion_expression
       type: [(type_identifier) @bind.type (qualified_type) @bind.type
              (pointer_type [(type_identifier) (qualified_type)] @bind.type)])]))
(short_var_declaration
  left: (expression_list . (identifier) @bind.name)
  right: (expression_list . (call_expression function: [(identifier) (selector_expression)] @bind.call)))
(function_declaration
  name: (identifier) @bind.returns
  result: [(type_identifier) @bind.type (qualified_type) @bind.type
           (pointer_type [(type_identifier) (qualified_type)] @bind.type)
           (parameter_list . (parameter_declaration
             type: [(type_identifier) @bind.type (qualified_type) @bind.type
                    (pointer_type [(type_identifier) (qualified_type)] @bind.type)]))])
(method_declaration
  name: (field_identifier) @bind.returns
  result: [(type_identifier) @bind.type (qualified_type) @bind.type
           (pointer_type [(type_identifier) (qualified_type)] @bind.type)
           (parameter_list . (parameter_declaration
             type: [(type_identifier) @bind.type (qualified_type) @bind.type
                    (pointer_type [(type_identifier) (qualified_type)] @bind.type)]))])
; every other local: a range variable, a name `:=` gives, a parameter of any type (a local shadows the
; package's function, type or constant of the same name)
(range_clause left: (expression_list (identifier) @bind.local))
(short_var_declaration left: (expression_list (identifier) @bind.local))
(parameter_declaration name: (identifier) @bind.local)
(variadic_parameter_declaration name: (identifier) @bind.local)

; ---- a struct's fields (named and embedded), shown in a table under the type's section
(type_spec type: (struct_type (field_declaration_list (field_declaration name: (field_identifier) @name) @member.field)))
(type_spec type: (struct_type (field_declaration_list (field_declaration !name type: (_) @name) @member.field)))
