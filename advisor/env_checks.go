package advisor

import (
	"fmt"
	"strconv"
)

// envFindings are msprof-analyze's environment checks (docs/diagnosis.md §6), read from
// profiler_metadata.json, with its HCCL_RDMA_TC defect fixed (its rule file spells
// the key HCCL_RDAM_TC, so its advice for the variable comes out empty).
func envFindings(env Env) []Finding {
	var out []Finding
	add := func(id string, sev Severity, title, evidence string) {
		out = append(out, Finding{ID: id, Severity: sev, Title: title, Evidence: evidence})
	}
	if v, ok := env["HCCL_ALGO"]; ok {
		add("env_hccl_algo", Medium, "HCCL_ALGO="+v+" forces the algorithm",
			"HCCL's own selector is cost-based; forcing an algorithm helps only where the calibrated model says so. Unless a measurement showed a gain: unset HCCL_ALGO")
	}
	if v, ok := env["HCCL_RDMA_TC"]; ok {
		tc, err := strconv.Atoi(v)
		ev := "HCCL_RDMA_TC is the RoCE traffic class (DSCP × 4, default 132 = DSCP 33); it must match the switches' DSCP/PFC plan, or RoCE traffic is queued wrongly"
		if err != nil || tc < 0 || tc > 255 || tc%4 != 0 {
			add("env_hccl_rdma_tc", Medium, "HCCL_RDMA_TC="+v+" is not a valid traffic class (0–255, a multiple of 4)", ev)
		} else {
			add("env_hccl_rdma_tc", Low, fmt.Sprintf("HCCL_RDMA_TC=%d (DSCP %d) is set", tc, tc/4), ev)
		}
	}
	if v, ok := env["HCCL_RDMA_SL"]; ok {
		add("env_hccl_rdma_sl", Low, "HCCL_RDMA_SL="+v+" is set",
			"the RoCE service level (0–7, default 4) must equal the NIC's PFC priority, or performance drops")
	}
	if v, ok := env["ASCEND_LAUNCH_BLOCKING"]; ok && v == "1" {
		add("env_ascend_launch_blocking", High, "ASCEND_LAUNCH_BLOCKING=1 serialises every launch",
			"it turns the task queue off (TASK_QUEUE_ENABLE=0) and makes the host wait for each op; export ASCEND_LAUNCH_BLOCKING=0")
	}
	if v, ok := env["ASCEND_GLOBAL_LOG_LEVEL"]; ok && v != "3" {
		add("env_ascend_global_log_level", Low, "ASCEND_GLOBAL_LOG_LEVEL="+v+" logs more than errors",
			"verbose logging costs host time; export ASCEND_GLOBAL_LOG_LEVEL=3 (error) for performance runs")
	}
	return out
}
