"""subsidieupdate's promises (COMMON-xx and its own, PROMISES.md), one test per rule of the catalogue
(src/heed/conformance/subsidie.py and common.py): what `heed conformance --bot subsidieupdate` proves."""
from tests.conformance.promises import rule_tests

session, test_rule, test_every_result_validates_against_its_schema = rule_tests("subsidieupdate")
