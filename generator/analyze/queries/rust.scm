; Rust: definitions, imports and references. Capture contract: see python.scm.
; Methods in `impl Type` / `impl Trait for Type` are qualified by the implementing type (@receiver).

; ---- definitions
; a trait's impl: its methods are labelled by the trait (@implements), so `impl Display for Value` and
; `impl Debug for Value` give two `fmt` sections a reader tells apart
(impl_item
  trait: (_) @implements
  body: (declaration_list
    (function_item name: (identifier) @name body: (block) @body) @def.method))
(impl_item
  type: [
    (type_identifier) @receiver
    (generic_type type: (type_identifier) @receiver)
    (scoped_type_identifier name: (type_identifier) @receiver)
  ]
  body: (declaration_list
    (function_item name: (identifier) @name body: (block) @body) @def.method))

(function_item name: (identifier) @name body: (block) @body) @def.function
(function_signature_item name: (identifier) @name) @def.method

(struct_item name: (type_identifier) @name body: (_) @body) @def.struct
(struct_item name: (type_identifier) @name !body) @def.struct
(union_item name: (type_identifier) @name body: (_) @body) @def.struct
(enum_item name: (type_identifier) @name body: (enum_variant_list) @body) @def.enum
(trait_item name: (type_identifier) @name body: (declaration_list) @body) @def.trait
(type_item name: (type_identifier) @name) @def.type
(const_item name: (identifier) @name) @def.constant
(static_item name: (identifier) @name) @def.constant
(mod_item name: (identifier) @name body: (declaration_list) @body) @def.module
; `mod net;` declares a module whose items live in another file: a symbol here, an import too (below)
(mod_item name: (identifier) @name !body) @def.module
(macro_definition name: (identifier) @name) @def.macro

; ---- imports: `use` paths as written, `mod foo;` as module "mod::foo"
(use_declaration argument: [(scoped_identifier) (identifier) (crate) (self) (super)] @import.module) @import
(use_declaration argument: (use_as_clause path: (_) @import.module)) @import
(use_declaration argument: (use_wildcard (_) @import.module) @import.name) @import
(use_declaration
  argument: (scoped_use_list
    path: (_) @import.module
    list: (use_list [
      (identifier) @import.name
      (scoped_identifier) @import.name
      (use_as_clause path: (_) @import.name)
      (self) @import.name
      (use_wildcard) @import.name
      (scoped_use_list) @import.name
    ]))) @import
(mod_item name: (identifier) @import.mod !body) @import

; ---- references
(call_expression function: (identifier) @ref.call)
(call_expression function: (field_expression field: (field_identifier) @ref.call))
(call_expression function: (scoped_identifier name: (identifier) @ref.call))
(call_expression function: (generic_function function: (identifier) @ref.call))
(call_expression function: (generic_function function: (scoped_identifier name: (identifier) @ref.call)))
(call_expression function: (generic_function function: (field_expression field: (field_identifier) @ref.call)))
(macro_invocation macro: (identifier) @ref.call)
(struct_expression name: (type_identifier) @ref.call)
((type_identifier) @ref.name (#not-eq? @ref.name "Self"))
(arguments (scoped_identifier name: (identifier) @ref.name))
(arguments (identifier) @ref.name)

; ---- bindings: the type a name holds (parameters, struct fields, `let x: T`, `let x = T::new()`,
; `let x = T { .. }`) and what a function declares it returns, for typed call resolution
(parameter
  pattern: (identifier) @bind.name
  type: [(type_identifier) @bind.type (scoped_type_identifier) @bind.type
         (generic_type type: [(type_identifier) (scoped_type_identifier)] @bind.type)
         (reference_type type: [(type_identifier) (scoped_type_identifier)] @bind.type)
         (reference_type type: (generic_type type: [(type_identifier) (scoped_type_identifier)] @bind.type))
         (reference_type type: (dynamic_type trait: [(type_identifier) (scoped_type_identifier)] @bind.type))])
(field_declaration
  name: (field_identifier) @bind.name
  type: [(type_identifier) @bind.type (scoped_type_identifier) @bind.type
         (generic_type type: [(type_identifier) (scoped_type_identifier)] @bind.type)
         (reference_type type: [(type_identifier) (scoped_type_identifier)] @bind.type)])
(let_declaration
  pattern: (identifier) @bind.name
  type: [(type_identifier) @bind.type (scoped_type_identifier) @bind.type
         (generic_type type: [(type_identifier) (scoped_type_identifier)] @bind.type)
         (reference_type type: [(type_identifier) (scoped_type_identifier)] @bind.type)])
(let_declaration
  pattern: (identifier) @bind.name
  !type
  value: [(call_expression function: [(identifier) (scoped_identifier)] @bind.call)
          (struct_expression name: [(type_identifier) (scoped_type_identifier)] @bind.type)])
(function_item
  name: (identifier) @bind.returns
  return_type: [(type_identifier) @bind.type (scoped_type_identifier) @bind.type
                (generic_type type: [(type_identifier) (scoped_type_identifier)] @bind.type)
                (reference_type type: [(type_identifier) (scoped_type_identifier)] @bind.type)])
; locals and generic parameters of unknown type: they shadow the items of the same name
((let_declaration pattern: (identifier) @bind.local) (#match? @bind.local "^[a-z_]"))
((tuple_pattern (identifier) @bind.local) (#match? @bind.local "^[a-z_]"))
((tuple_struct_pattern (identifier) @bind.local) (#match? @bind.local "^[a-z_]"))
((struct_pattern (field_pattern (identifier) @bind.local)) (#match? @bind.local "^[a-z_]"))
((field_pattern name: (shorthand_field_identifier) @bind.local))
((closure_parameters (identifier) @bind.local))
((closure_parameters (parameter pattern: (identifier) @bind.local)))
((for_expression pattern: (identifier) @bind.local))
((match_pattern (identifier) @bind.local) (#match? @bind.local "^[a-z_]"))
((type_parameter name: (type_identifier) @bind.local))

; ---- a struct's fields and an enum's variants, shown in a table under the type's section
(struct_item body: (field_declaration_list (field_declaration name: (field_identifier) @name) @member.field))
(struct_item body: (ordered_field_declaration_list type: (_) @name) @member.field)
(enum_item body: (enum_variant_list (enum_variant name: (identifier) @name) @member.variant))
