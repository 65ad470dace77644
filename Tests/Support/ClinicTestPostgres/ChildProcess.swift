import Foundation

// Shared by the test targets that run children (the CLI's and the server's harnesses), here
// because this support module is the one they all can import.

extension Process {
    /// The child's exit status (128 + the signal for one killed by a signal), waited for with
    /// `waitpid` as well as Foundation's own watch: `Process.waitUntilExit` has waited for ever
    /// beside a child that had exited (a zombie nobody reaped: in a CI run with many children at
    /// once, and in a server test's template database made by `clinic admin import-clinics`,
    /// one run in five of the FHIR tests). Whichever reaps it first tells the status.
    public func reapedExitStatus() -> Int32 {
        reapedExitStatus(waitingAtMost: .infinity) ?? -1
    }

    /// `reapedExitStatus`, or nil when the child still runs after `seconds`.
    public func reapedExitStatus(waitingAtMost seconds: TimeInterval) -> Int32? {
        let pid = processIdentifier, deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid {
                // WIFEXITED / WEXITSTATUS / WTERMSIG, which are C macros.
                let signal = status & 0x7f
                return signal == 0 ? (status >> 8) & 0xff : 128 + signal
            }
            if reaped == -1 || !isRunning {
                // Foundation reaped it (ECHILD here): its status is Foundation's.
                waitUntilExit()
                return terminationStatus
            }
            usleep(2_000)
        }
        return nil
    }
}
