"""wannadobot's promises (COMMON-xx and its own, PROMISES.md), one test per rule of the catalogue
(src/heed/conformance/wannado.py and common.py): what `heed conformance --bot wannadobot` proves."""
from tests.conformance.promises import rule_tests

session, test_rule = rule_tests("wannadobot")
