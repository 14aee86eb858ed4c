; Kotlin: classes, interfaces, objects, functions, properties, imports. Contract: see python.scm.
; The grammar has no field names, so patterns match children by type.

(class_declaration "interface" (type_identifier) @name) @def.interface
(class_declaration (type_identifier) @name (enum_class_body) @body) @def.enum
(class_declaration (type_identifier) @name (class_body) @body) @def.class
(class_declaration (type_identifier) @name) @def.class
(object_declaration (type_identifier) @name) @def.class
; a companion object: by its name, or `Companion` (how Kotlin names one that has none: LanguageRules.implicit_names)
(companion_object (type_identifier) @name) @def.class
(companion_object "object" @name) @def.class
; an extension (`fun Context.obj()`, `val Context.Builder.obj`) is qualified by its receiver type (@qualifier),
; not its member: a top-level declaration named `Context.obj`
(function_declaration (receiver_type)? @qualifier . (simple_identifier) @name (function_body) @body) @def.function
(function_declaration (receiver_type)? @qualifier . (simple_identifier) @name) @def.function
(type_alias (type_identifier) @name) @def.type
(source_file
  (property_declaration (receiver_type)? @qualifier . (variable_declaration (simple_identifier) @name)) @def.constant
  (#match? @name "^[A-Z][A-Z0-9_]*$"))
; properties, as C#'s are fields: a class's, an object's (a companion's `const val`), an enum class's after
; its entries, and the file's other top-level ones; a function's `val` is a local (its body is `statements`)
(class_body (property_declaration (variable_declaration (simple_identifier) @name)) @def.field)
(enum_class_body (property_declaration (variable_declaration (simple_identifier) @name)) @def.field)
(source_file
  (property_declaration (receiver_type)? @qualifier . (variable_declaration (simple_identifier) @name)) @def.variable
  (#not-match? @name "^[A-Z][A-Z0-9_]*$"))

(import_header) @import.module

(call_expression (simple_identifier) @ref.call)
(call_expression (navigation_expression (navigation_suffix (simple_identifier) @ref.call)))
(delegation_specifier (user_type (type_identifier) @ref.name))
(user_type (type_identifier) @ref.name)

; ---- enum entries and a class's constructor properties, shown in a table under the type's section
(enum_entry (simple_identifier) @name) @member.variant
(class_parameter (simple_identifier) @name) @member.field

; ---- bindings: what a name holds, for typed call resolution (contract: see java.scm): typed parameters
; and properties (a constructor's `val` parameters are the class's), `val x = T()`, declared return types,
; a class's supertypes
(parameter (simple_identifier) @bind.name
  [(user_type . (type_identifier) @bind.type) (nullable_type (user_type . (type_identifier) @bind.type))])
(class_parameter (simple_identifier) @bind.name
  [(user_type . (type_identifier) @bind.type) (nullable_type (user_type . (type_identifier) @bind.type))])
(property_declaration (variable_declaration (simple_identifier) @bind.name
  [(user_type . (type_identifier) @bind.type) (nullable_type (user_type . (type_identifier) @bind.type))]))
(property_declaration (variable_declaration (simple_identifier) @bind.name .)
  (call_expression . [(simple_identifier) (navigation_expression)] @bind.call))
(function_declaration (simple_identifier) @bind.returns (function_value_parameters) .
  [(user_type . (type_identifier) @bind.type) (nullable_type (user_type . (type_identifier) @bind.type))])
(class_declaration (type_identifier) @bind.name
  (delegation_specifier [(user_type . (type_identifier) @bind.type)
                         (constructor_invocation (user_type . (type_identifier) @bind.type))]))
(object_declaration (type_identifier) @bind.name
  (delegation_specifier [(user_type . (type_identifier) @bind.type)
                         (constructor_invocation (user_type . (type_identifier) @bind.type))]))
; locals of unknown type: they shadow the members of the same name
(parameter (simple_identifier) @bind.local)
(property_declaration (variable_declaration (simple_identifier) @bind.local))
(lambda_parameters (variable_declaration (simple_identifier) @bind.local))
