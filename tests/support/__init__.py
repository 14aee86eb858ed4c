"""What the tests share: scripted servers (fake_llm, object_store, servers), the real repositories
(real_repos), repositories and trees written from dicts (repo_files, nav_trees, index_repos), planted secrets
and hostile markup (planted_secrets, redaction_corpus, hostile), chromium over DevTools (browser), and the
checks that keep the docs true (doc_refs, module_table: `make docs`).

A test file imports from here, never from another test file (tests/unit/test_test_layout.py checks it)."""
