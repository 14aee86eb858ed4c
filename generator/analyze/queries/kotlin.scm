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
(function_declaration (simple_identifier) @name (function_body) @body) @def.function
(function_declaration (simple_identifier) @name) @def.function
(type_alias (type_identifier) @name) @def.type
(source_file
  (property_declaration (variable_declaration (simple_identifier) @name)) @def.constant
  (#match? @name "^[A-Z][A-Z0-9_]*$"))

(import_header) @import.module

(call_expression (simple_identifier) @ref.call)
(call_expression (navigation_expression (navigation_suffix (simple_identifier) @ref.call)))
(delegation_specifier (user_type (type_identifier) @ref.name))
(user_type (type_identifier) @ref.name)

; ---- enum entries and a class's constructor properties, shown in a table under the type's section
(enum_entry (simple_identifier) @name) @member.variant
(class_parameter (simple_identifier) @name) @member.field
