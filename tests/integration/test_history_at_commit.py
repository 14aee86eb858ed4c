"""bench/history_bench.py --at-commit on a real git repository: a question is asked of an index of its own
commit's tree, so a function moved away since does not turn a right answer into a miss."""

import json

from answer.answering.localize import locate
from answer.retrieval.evaluate import load_questions, run
from bench import corpus
from bench.history_bench import REVISION_DONE, measure_at_commit
from generator.index.command import index_repository
from generator.index.store import open_index
from sourcebook.cli import eval_report
from sourcebook.config import load_config
from tests.support.git_repos import first_commit, git

INVOICE = ("def render_invoice(order):\n    lines = [f'{item.name}: {item.price}' for item in order.items]\n"
           "    return '\\n'.join(lines)\n")
DISCOUNT = ("\n\ndef apply_coupon_discount(order, coupon):\n"
            "    percent_off = coupon.percent / 100\n    return order.total * (1 - percent_off)\n")
QUESTION = "Take the coupon percentage off the order total"


def test_a_question_is_scored_against_the_index_at_its_commit(make_repo, tmp_path):
    root = make_repo({"billing/invoice.py": INVOICE,
                      "mail/sender.py": "def deliver(message):\n    return None\n"})
    first_commit(root)
    (root / "billing/invoice.py").write_text(INVOICE + DISCOUNT)
    git(root, "commit", "-qam", QUESTION)
    first = git(root, "rev-parse", "HEAD")
    (root / "mail/sender.py").write_text("def deliver(message):\n    message.send()\n    return True\n")
    git(root, "commit", "-qam", "Actually send the outgoing message")
    # the discount moves into its own module under another name: the question's code is elsewhere now
    (root / "billing/invoice.py").write_text(INVOICE)
    (root / "pricing").mkdir()
    (root / "pricing/coupons.py").write_text(DISCOUNT.replace("apply_coupon_discount", "discounted_total"))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Split pricing rules out")
    head = git(root, "rev-parse", "HEAD")

    # the default mode: the set mined against the HEAD index, asked of it
    config = load_config(root, {"out_dir": str(tmp_path / "head"), "embed": {"provider": "none"}})
    index_repository(config)
    store = open_index(config)
    work = tmp_path / "work"
    (work / "sets").mkdir(parents=True)
    mined = eval_report.mine_history(store, root, 10)
    eval_report.write_set(mined, work / "sets" / "shop.jsonl")
    [asked_at_head] = [q for q in load_questions(work / "sets" / "shop.jsonl") if q.question == QUESTION]
    assert asked_at_head.gold_files == ("billing/invoice.py",)
    [pinned] = run(store, [asked_at_head], locate=locate)
    assert pinned.ranked[0] == "pricing/coupons.py"  # right today, a miss by the gold

    repo = corpus.Repo("example/shop", head, "python")
    outcomes, lines, skipped = measure_at_commit(repo, work, "tune", git_dir=root / ".git")
    assert lines == {}
    assert not skipped
    by_question = {o.question.question: o for o in outcomes}
    at_commit = by_question[QUESTION]
    assert at_commit.question.extra["mode"] == "at-commit"
    assert at_commit.question.extra["revision"] == first[:12]
    assert at_commit.question.gold_files == ("billing/invoice.py",)
    assert at_commit.ranked[0] == "billing/invoice.py"  # the index of that commit holds the function there
    [gold_function] = at_commit.question.extra["gold_functions"]
    assert gold_function["qualname"] == "apply_coupon_discount"
    assert (gold_function["start_line"], gold_function["end_line"]) == (6, 8)  # its lines at that commit
    assert "pricing/coupons.py" not in at_commit.ranked  # nothing of the later tree

    revs = work / "revs" / "shop"
    built = sorted(p.name for p in revs.iterdir() if not p.name.startswith("."))
    assert first[:12] in built
    assert len(built) == len(outcomes)
    done = json.loads((revs / first[:12] / REVISION_DONE).read_text())
    assert done["commit"] == first
    # the next run reuses the indexes and asks the same questions again
    again, _, _ = measure_at_commit(repo, work, "tune", git_dir=root / ".git")
    assert [o.ranked for o in again] == [o.ranked for o in outcomes]


def test_questions_without_a_tree_or_a_gold_at_their_commit_are_left_out_and_counted(make_repo, tmp_path):
    root = make_repo({"shop/cart.py": "def add_item(cart, item):\n    cart.append(item)\n",
                      "tests/fixtures.py": "def sample_cart():\n    return []\n"})
    first_commit(root)
    (root / "tests/fixtures.py").write_text("def sample_cart():\n    return ['apple', 'pear']\n")
    git(root, "commit", "-qam", "Give the sample basket two fruits")
    fruit = git(root, "rev-parse", "HEAD")
    git(root, "mv", "tests/fixtures.py", "shop/samples.py")  # test helper promoted to the package
    git(root, "commit", "-qm", "Ship the sample basket with the package")
    head = git(root, "rev-parse", "HEAD")
    work = tmp_path / "work"
    (work / "sets").mkdir(parents=True)
    lines = [{"id": fruit[:12], "question": "Give the sample basket two fruits", "commit": fruit,
              "gold_files": ["shop/samples.py"], "gold_functions": [], "language": "python"},  # followed
             {"id": "f" * 12, "question": "A commit this repository lacks", "commit": "f" * 40,
              "gold_files": ["shop/cart.py"], "gold_functions": [], "language": "python"}]
    (work / "sets" / "shop.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    outcomes, _, skipped = measure_at_commit(corpus.Repo("example/shop", head, "python"), work, "report",
                                             git_dir=root / ".git")
    assert outcomes == []
    # at its commit the file was a test helper, not source: no gold to score
    assert skipped == {"commit unreadable": 1, "gold empty at the commit": 1}


def test_a_commit_whose_mirror_lacks_a_blob_is_asked_without_that_file(make_repo, tmp_path):
    root = make_repo({"shop/cart.py": "def add_item(cart, item):\n    cart.append(item)\n",
                      "data/catalogue.json": '{"apple": 1}\n'})
    first_commit(root)
    (root / "shop/cart.py").write_text("def add_item(cart, item):\n    if item not in cart:\n"
                                       "        cart.append(item)\n")
    git(root, "commit", "-qam", "Add an item to the cart only once")
    change = git(root, "rev-parse", "HEAD")
    mirror = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--bare", str(root), str(mirror))
    blob = git(mirror, "rev-parse", f"{change}:data/catalogue.json")
    # the fetch tool can leave a repository's largest files out of a mirror; read-tree then refuses the commit
    (mirror / "objects" / blob[:2] / blob[2:]).unlink()
    work = tmp_path / "work"
    (work / "sets").mkdir(parents=True)
    line = {"id": change[:12], "question": "Add an item to the cart only once", "commit": change,
            "gold_files": ["shop/cart.py"], "gold_functions": [], "language": "python"}
    (work / "sets" / "shop.jsonl").write_text(json.dumps(line) + "\n")
    objects_before = sorted(p.name for p in (mirror / "objects").rglob("*"))
    outcomes, _, skipped = measure_at_commit(corpus.Repo("example/shop", change, "python"), work, "tune",
                                             git_dir=mirror)
    assert not skipped
    [asked] = outcomes
    assert asked.question.gold_files == ("shop/cart.py",)
    assert asked.ranked[0] == "shop/cart.py"
    tree = work / "revs" / "shop" / ".tree"
    assert (tree / "shop/cart.py").read_text().count("append") == 1
    assert not (tree / "data/catalogue.json").exists()
    assert sorted(p.name for p in (mirror / "objects").rglob("*")) == objects_before  # read, never written
