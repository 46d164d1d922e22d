package io.cerberus.shedlock;

/** ShedLock's provider suite on the in-process engine. */
class MemShedLockSuiteTest extends ShedLockSuite {
    @Override
    protected String engineUri() {
        return "mem:shedlock-suite";
    }
}
