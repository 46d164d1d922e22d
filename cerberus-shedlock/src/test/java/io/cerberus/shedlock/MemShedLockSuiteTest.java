package io.cerberus.shedlock;

/** ShedLock's provider suite on the in-process engine: run by cerberus-shedlock-v6-test, on ShedLock 6. */
class MemShedLockSuiteTest extends ShedLockSuite {
    @Override
    protected String engineUri() {
        return "mem:shedlock-suite";
    }
}
