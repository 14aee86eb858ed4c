; Ruby: modules, classes, methods, constants, require. Capture contract: see python.scm.

(module name: (_) @name) @def.module
(class name: (_) @name) @def.class
(method name: (_) @name) @def.function
(singleton_method name: (_) @name) @def.method
; `A = B = 1` matches twice: parse.py declares B where A is (the value of a declaration is no scope)
(assignment left: (constant) @name) @def.constant
; `MAJOR, MINOR = 2, 1`: each name
(assignment left: (left_assignment_list (constant) @name)) @def.constant
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

; ---- bindings: what a name holds, for typed call resolution (contract: see java.scm): a class's superclass
; and the modules it mixes in (bound to its own name), `x = Klass.new`, `@x = Klass.new`
(class name: (constant) @bind.name superclass: (superclass [(constant) (scope_resolution)] @bind.type))
((class name: (constant) @bind.name
   body: (body_statement (call method: (identifier) @_mixin
                               arguments: (argument_list [(constant) (scope_resolution)] @bind.type))))
  (#match? @_mixin "^(include|extend|prepend)$"))
((module name: (constant) @bind.name
   body: (body_statement (call method: (identifier) @_mixin
                               arguments: (argument_list [(constant) (scope_resolution)] @bind.type))))
  (#match? @_mixin "^(include|extend)$"))
((assignment left: [(identifier) (instance_variable)] @bind.name
   right: (call receiver: [(constant) (scope_resolution)] @bind.type method: (identifier) @_new))
  (#eq? @_new "new"))
; locals of unknown type: they shadow the methods of the same name
(method_parameters [(identifier) @bind.local (optional_parameter name: (identifier) @bind.local)
                    (keyword_parameter name: (identifier) @bind.local)])
(block_parameters (identifier) @bind.local)
(assignment left: (identifier) @bind.local)
