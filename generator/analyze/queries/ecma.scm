; Patterns shared by JavaScript, TypeScript and TSX (included through "; inherits: ecma").
; Capture contract: see python.scm.

; ---- definitions
(class_declaration
  name: (_) @name
  body: (class_body) @body) @def.class

(function_declaration
  name: (identifier) @name
  body: (statement_block) @body) @def.function

(generator_function_declaration
  name: (identifier) @name
  body: (statement_block) @body) @def.function

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name
  body: (statement_block) @body) @def.method

; functions assigned to a name: const f = (...) => ..., const f = function (...) {...}, and (TypeScript)
; the same behind a cast or parentheses: const create = ((s) => ...) as Create
(variable_declarator
  name: (identifier) @name
  value: [
    (arrow_function body: (_) @body)
    (function_expression body: (_) @body)
    (parenthesized_expression (arrow_function body: (_) @body))
    (parenthesized_expression (function_expression body: (_) @body))
  ]) @def.function

; CommonJS and prototype style: Foo.prototype.bar = function () {}, exports.baz = () => {}
((assignment_expression
   left: (member_expression
     object: (member_expression object: (identifier) @receiver property: (property_identifier) @_proto)
     property: (property_identifier) @name)
   right: [(function_expression body: (_) @body) (arrow_function body: (_) @body)]) @def.method
  (#eq? @_proto "prototype"))
((assignment_expression
   left: (member_expression object: (_) @_exports property: (property_identifier) @name)
   right: [(function_expression body: (_) @body) (arrow_function body: (_) @body)]) @def.function
  (#match? @_exports "^(module\\.)?exports$"))

; a function assigned to a property of an object (Express's `app.all = function all(path) {}`, `res.send =
; function send(body) {}`): a method of that object
((assignment_expression
   left: (member_expression object: (identifier) @receiver property: (property_identifier) @name)
   right: [(function_expression body: (_) @body) (arrow_function body: (_) @body)]) @def.method
  (#not-match? @receiver "^(module|exports|window|globalThis|this)$"))

; an object literal of functions given a name at the top level (`var utils = { merge: function (a, b) {},
; clone: (x) => x }`, `module.exports = { parse: function parse(s) {} }`): each function is a method of it, as
; `clone(x) {}` is; one inside a function is a local's
(program [
  (lexical_declaration (variable_declarator value: (object (pair
    key: [(property_identifier) @name (string (string_fragment) @name)]
    value: [(function_expression body: (_) @body) (arrow_function body: (_) @body)]) @def.method)))
  (variable_declaration (variable_declarator value: (object (pair
    key: [(property_identifier) @name (string (string_fragment) @name)]
    value: [(function_expression body: (_) @body) (arrow_function body: (_) @body)]) @def.method)))
  (export_statement (lexical_declaration (variable_declarator value: (object (pair
    key: [(property_identifier) @name (string (string_fragment) @name)]
    value: [(function_expression body: (_) @body) (arrow_function body: (_) @body)]) @def.method))))
  (expression_statement (assignment_expression right: (object (pair
    key: [(property_identifier) @name (string (string_fragment) @name)]
    value: [(function_expression body: (_) @body) (arrow_function body: (_) @body)]) @def.method)))
])

; top-level UPPER_CASE constants, exported or not
(program
  (lexical_declaration
    (variable_declarator
      name: (identifier) @name
      value: [(number) (string) (template_string) (object) (array) (call_expression) (member_expression)
              (binary_expression) (new_expression) (identifier) (true) (false) (unary_expression)]) @def.constant)
  (#match? @name "^[A-Z][A-Z0-9_]*$"))
(program
  (export_statement
    (lexical_declaration
      (variable_declarator
        name: (identifier) @name
        value: [(number) (string) (template_string) (object) (array) (call_expression) (member_expression)
                (binary_expression) (new_expression) (identifier) (true) (false) (unary_expression)]) @def.constant))
  (#match? @name "^[A-Z][A-Z0-9_]*$"))

; every other top-level exported binding is part of the module's API whatever it holds: a class made by a
; factory (`export const ZodString = $constructor(...)`), an object of functions, a function behind a cast
; (the patterns above, written first, keep the function kind of those that are functions)
(program
  (export_statement
    (lexical_declaration
      (variable_declarator name: (identifier) @name) @def.constant)))

; ---- imports
(import_statement source: (string (string_fragment) @import.module)) @import
(import_statement
  (import_clause (identifier) @import.name)
  source: (string (string_fragment) @import.module)) @import
(import_statement
  (import_clause (named_imports (import_specifier name: (_) @import.name)))
  source: (string (string_fragment) @import.module)) @import
(export_statement source: (string (string_fragment) @import.module)) @import
(export_statement
  (export_clause (export_specifier name: (_) @import.name))
  source: (string (string_fragment) @import.module)) @import
(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string (string_fragment) @import.module))
  (#eq? @_require "require")) @import
(call_expression
  function: (import)
  arguments: (arguments . (string (string_fragment) @import.module))) @import

; ---- references
(call_expression function: (identifier) @ref.call)
(call_expression function: (member_expression property: (property_identifier) @ref.call))
(new_expression constructor: (identifier) @ref.call)
(new_expression constructor: (member_expression property: (property_identifier) @ref.call))
(arguments (identifier) @ref.name)
(decorator (identifier) @ref.name)
(decorator (call_expression function: (identifier) @ref.name))

; ---- bindings: `const x = new T()`, `const x = f()`, `this.x = new T()`, and locals of unknown type (they shadow)
(variable_declarator name: (identifier) @bind.name
  value: (new_expression constructor: [(identifier) (member_expression)] @bind.type))
(assignment_expression left: (member_expression object: (this)) @bind.name
  right: (new_expression constructor: [(identifier) (member_expression)] @bind.type))
(variable_declarator name: (identifier) @bind.name
  value: (call_expression function: [(identifier) (member_expression)] @bind.call))
(variable_declarator name: (identifier) @bind.local)
(variable_declarator name: (object_pattern (shorthand_property_identifier_pattern) @bind.local))
(arrow_function parameter: (identifier) @bind.local)
(catch_clause parameter: (identifier) @bind.local)
; `const { Command, Option } = require('./lib/command.js')`: the names a require imports
(variable_declarator
  name: (object_pattern (shorthand_property_identifier_pattern) @import.name)
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments . (string (string_fragment) @import.module)))
  (#eq? @_require "require")) @import
