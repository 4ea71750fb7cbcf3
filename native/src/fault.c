/* placeholder replaced by the fault-injection work (issue 9) */
