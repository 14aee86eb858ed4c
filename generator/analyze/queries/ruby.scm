; Ruby: modules, classes, methods, constants, require. Capture contract: see python.scm.

(module name: (_) @name) @def.module
(class name: (_) @name) @def.class
(method name: (_) @name) @def.function
(singleton_method name: (_) @name) @def.method
(assignment left: (constant) @name) @def.constant
; methods made by a call: attr_reader/attr_writer/attr_accessor (one per name), define_method,
; alias_method and `alias new old`
((call
   method: (identifier) @_attr
   arguments: (argument_list (simple_symbol) @name @def.method))
  (#match? @_attr "^attr_(reader|writer|accessor)$"))
((call
   method: (identifier) @_made
   arguments: (argument_list . (simple_symbol) @name)) @def.method
  (#match? @_made "^(define_method|alias_method)$"))
(alias name: (_) @name) @def.method

((call
   method: (identifier) @_require
   arguments: (argument_list . (string (string_content) @import.module)))
  (#match? @_require "^(require|require_relative|load)$")) @import

(call method: (identifier) @ref.call)
(superclass (constant) @ref.name)
(scope_resolution name: (constant) @ref.name)
(call receiver: (constant) @ref.name)
