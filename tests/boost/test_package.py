"""The boost package does not import its federated subpackage (which imports boost): no
package cycle, whatever the import order."""

from _helpers import run_in_fresh_interpreter


def test_importing_boost_does_not_import_federated():
    code = (
        "import json, sys\n"
        "import manytask.boost as boost\n"
        "from manytask.boost import MultiBoostClassifier, DomainClassifier\n"
        "before = sorted(m for m in sys.modules if m.startswith('manytask.boost.federated'))\n"
        "federated = boost.federated\n"
        "print(json.dumps({'before': before, 'after': 'manytask.boost.federated' in sys.modules,\n"
        "                  'same': federated is sys.modules['manytask.boost.federated']}))\n"
    )
    result = run_in_fresh_interpreter(code)
    assert result["before"] == []
    # the public namespace still reaches it, on first use
    assert result["after"] and result["same"]


def test_importing_federated_first_imports_boost_without_a_cycle():
    code = (
        "import json, sys\n"
        "from manytask.boost.federated import simulate\n"
        "from manytask.boost import MultiBoostClassifier\n"
        "print(json.dumps({'ok': callable(simulate) and MultiBoostClassifier is not None}))\n"
    )
    assert run_in_fresh_interpreter(code)["ok"]
