#!/bin/bash
set -uxo pipefail
cd /testbed
git -c core.fileMode=false diff f3973a38a0219277377e4cb576109ae989f19f94
git checkout f3973a38a0219277377e4cb576109ae989f19f94 tests/test_rules.py
git apply -v - <<'EOF_114329324912'
diff --git a/tests/test_rules.py b/tests/test_rules.py
index b6ca838..d93b6e3 100644
--- a/tests/test_rules.py
+++ b/tests/test_rules.py
@@ -3,3 +3,7 @@ from anchor86.rules import *  # noqa: F403
 
 def test_measure_items_far():
     assert measure_items(60, 158) == 218
+
+
+def test_measure_items_boundary():
+    assert measure_items(10, 158) == 168
EOF_114329324912
: '>>>>> Start Test Output'
PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -rA -p no:cacheprovider tests/test_rules.py
SWEBENCH_TEST_EXIT_CODE=$?
: '>>>>> End Test Output'
echo ">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE"
git checkout f3973a38a0219277377e4cb576109ae989f19f94 tests/test_rules.py
