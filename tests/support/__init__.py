"""What the tests share: scripted servers (fake_llm, object_store, servers), the real repositories
(real_repos), repositories and trees written from dicts (repo_files, nav_trees, index_repos), planted secrets
and hostile markup (planted_secrets, redaction_corpus, hostile), and chromium over DevTools (browser).

A test file imports from here, never from another test file (tests/unit/test_test_layout.py checks it)."""
