#!/bin/sh
# Scenario 1 (inside one VM): 4 ranks over rxe0 loopback; verbs ops directly, then gradsync.
rc=0
echo "== verbs_pingpong 4 ranks, 2 QPs per peer"
timeout 60 verbs_pingpong --local 4 --qps 2 --device rxe0:1 --gid -1 || rc=1
echo "== verbs_pingpong 2 ranks, cq_mode event, depth 16, nothing inline"
timeout 60 verbs_pingpong --local 2 --event --depth 16 --inline 0 --device auto || rc=1
if [ -x /bin/gradsync ]; then
	echo "== gradsync run roce_local4.ini"
	timeout 120 gradsync run roce_local4.ini || rc=1
fi
exit $rc
