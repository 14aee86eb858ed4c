; Python: definitions, imports and references.
; Capture names are the contract with generator/analyze/parse.py:
;   @def.<kind> the definition node, @name its name, @body where the signature stops,
;   @import the statement, @import.module / @import.name (/ @import.alias), @ref.call / @ref.name / @ref.base (a class's base),
;   @bind.name with @bind.type (an annotation) or @bind.call (what is called): the type a name holds;
;   @bind.returns (a function's name) with @bind.type: what it returns.

; ---- definitions
(class_definition
  name: (identifier) @name
  body: (block) @body) @def.class

(function_definition
  name: (identifier) @name
  body: (block) @body) @def.function

; module-level UPPER_CASE assignments are the constants a reader looks for
(module
  (assignment left: (identifier) @name) @def.constant
  (#match? @name "^_?[A-Z][A-Z0-9_]*$"))

; ---- imports
(import_statement name: (dotted_name) @import.module) @import
(import_statement name: (aliased_import name: (dotted_name) @import.module alias: (identifier) @import.alias)) @import

(import_from_statement
  module_name: (_) @import.module
  name: (dotted_name) @import.name) @import
(import_from_statement
  module_name: (_) @import.module
  name: (aliased_import name: (dotted_name) @import.name alias: (identifier) @import.alias)) @import
(import_from_statement
  module_name: (_) @import.module
  (wildcard_import) @import.name) @import

; ---- references: calls
(call function: (identifier) @ref.call)
(call function: (attribute attribute: (identifier) @ref.call))

; ---- references: names used (bases, decorators, annotations, callbacks, exceptions)
; Bare identifiers passed as arguments, assigned or returned are left out on purpose: they are mostly
; local variables, cost a third of all references, and would link symbols that merely share a name.
(class_definition superclasses: (argument_list (identifier) @ref.base))
(class_definition superclasses: (argument_list (attribute attribute: (identifier) @ref.base)))
(decorator (identifier) @ref.name)
(decorator (attribute attribute: (identifier) @ref.name))
(type (identifier) @ref.name)
(type (attribute attribute: (identifier) @ref.name))
(keyword_argument value: (identifier) @ref.name)
(except_clause (identifier) @ref.name)
(except_clause (attribute attribute: (identifier) @ref.name))
(raise_statement (identifier) @ref.name)

; ---- bindings: the type a name holds, which the call graph follows (`x = Cls()`, `x: Cls`, `def f(x: Cls)`)
(assignment
  left: [(identifier) (attribute object: (identifier) attribute: (identifier))] @bind.name
  type: (type [(identifier) (attribute)] @bind.type))
(assignment
  left: [(identifier) (attribute object: (identifier) attribute: (identifier))] @bind.name
  right: (call function: [(identifier) (attribute)] @bind.call))
(typed_parameter (identifier) @bind.name type: (type [(identifier) (attribute)] @bind.type))
(typed_default_parameter name: (identifier) @bind.name type: (type [(identifier) (attribute)] @bind.type))
(function_definition name: (identifier) @bind.returns return_type: (type [(identifier) (attribute)] @bind.type))
