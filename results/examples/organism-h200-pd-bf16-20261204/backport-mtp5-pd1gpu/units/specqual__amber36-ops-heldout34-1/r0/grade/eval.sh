#!/bin/bash
set -uxo pipefail
cd /testbed
git -c core.fileMode=false diff 3aad3afe7b4120c342e81a343804eb3134ec2071
git checkout 3aad3afe7b4120c342e81a343804eb3134ec2071 tests/test_ops.py
git apply -v - <<'EOF_114329324912'
diff --git a/tests/test_ops.py b/tests/test_ops.py
index bac45b0..c23860d 100644
--- a/tests/test_ops.py
+++ b/tests/test_ops.py
@@ -3,3 +3,7 @@ from amber36.ops import *  # noqa: F403
 
 def test_last_cards_empty():
     assert last_cards([]) is None
+
+
+def test_last_cards_takes_last():
+    assert last_cards([16, 57, 88]) == 88
EOF_114329324912
: '>>>>> Start Test Output'
PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -rA -p no:cacheprovider tests/test_ops.py
SWEBENCH_TEST_EXIT_CODE=$?
: '>>>>> End Test Output'
echo ">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE"
git checkout 3aad3afe7b4120c342e81a343804eb3134ec2071 tests/test_ops.py
