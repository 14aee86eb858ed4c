; Scala: classes, objects, traits, enums, methods, type aliases, constants, imports. Contract: see python.scm.

; ---- definitions
(class_definition name: (identifier) @name body: (template_body) @body) @def.class
(class_definition name: (identifier) @name) @def.class
(object_definition name: (identifier) @name body: (template_body) @body) @def.class
(object_definition name: (identifier) @name) @def.class
(trait_definition name: (identifier) @name body: (template_body) @body) @def.trait
(trait_definition name: (identifier) @name) @def.trait
(enum_definition name: (identifier) @name body: (enum_body) @body) @def.enum
; `def apply(…)`, and an operator (`def ++(other: Str)`, `def unary_!`)
(function_definition name: [(identifier) (operator_identifier)] @name body: (_) @body) @def.function
(function_declaration name: [(identifier) (operator_identifier)] @name) @def.function
(type_definition name: (type_identifier) @name) @def.type

; UpperCamel or UPPER_CASE vals at the top level or in an object, a class or a trait are the constants a
; reader looks for (vars the variables); `val A, B = 1` declares each of its names
(compilation_unit
  (val_definition pattern: [(identifier) @name (identifiers (identifier) @name)]) @def.constant
  (#match? @name "^[A-Z]"))
(compilation_unit
  (var_definition pattern: [(identifier) @name (identifiers (identifier) @name)]) @def.variable
  (#match? @name "^[A-Z]"))
(object_definition body: (template_body
  (val_definition pattern: [(identifier) @name (identifiers (identifier) @name)]) @def.constant)
  (#match? @name "^[A-Z]"))
(object_definition body: (template_body
  (var_definition pattern: [(identifier) @name (identifiers (identifier) @name)]) @def.variable)
  (#match? @name "^[A-Z]"))
(class_definition body: (template_body
  (val_definition pattern: [(identifier) @name (identifiers (identifier) @name)]) @def.constant)
  (#match? @name "^[A-Z]"))
(class_definition body: (template_body
  (var_definition pattern: [(identifier) @name (identifiers (identifier) @name)]) @def.variable)
  (#match? @name "^[A-Z]"))
(trait_definition body: (template_body
  (val_definition pattern: [(identifier) @name (identifiers (identifier) @name)]) @def.constant)
  (#match? @name "^[A-Z]"))
(trait_definition body: (template_body
  (var_definition pattern: [(identifier) @name (identifiers (identifier) @name)]) @def.variable)
  (#match? @name "^[A-Z]"))

; ---- imports: `import a.b.C`, `import a.b._`, `import a.b.{C, D => E}` (the selected names)
(import_declaration) @import.module
(import_declaration (namespace_selectors (identifier) @import.name)) @import.module
(import_declaration (namespace_selectors (arrow_renamed_identifier name: (identifier) @import.name)))
  @import.module

; ---- references
(call_expression function: (identifier) @ref.call)
(call_expression function: (field_expression field: (identifier) @ref.call))
(instance_expression (type_identifier) @ref.call)
(extends_clause type: (type_identifier) @ref.name)
(type_identifier) @ref.name
(field_expression value: (identifier) @ref.name)
