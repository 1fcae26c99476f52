#!/bin/bash
set -uxo pipefail
cd /testbed
git -c core.fileMode=false diff 4a0a38759c8b2a55cfd8424d863b427acfe40b37
git checkout 4a0a38759c8b2a55cfd8424d863b427acfe40b37 tests/test_tools.py
git apply -v - <<'EOF_114329324912'
diff --git a/tests/test_tools.py b/tests/test_tools.py
index ae6de84..d1ae91b 100644
--- a/tests/test_tools.py
+++ b/tests/test_tools.py
@@ -3,3 +3,7 @@ from amber63.tools import *  # noqa: F403
 
 def test_scale_values_far():
     assert scale_values(-39, 147) == 108
+
+
+def test_scale_values_boundary():
+    assert scale_values(11, 147) == 158
EOF_114329324912
: '>>>>> Start Test Output'
PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -rA -p no:cacheprovider tests/test_tools.py
SWEBENCH_TEST_EXIT_CODE=$?
: '>>>>> End Test Output'
echo ">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE"
git checkout 4a0a38759c8b2a55cfd8424d863b427acfe40b37 tests/test_tools.py
