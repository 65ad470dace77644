import ClinicKit
import Testing

/// The ClinicError `body` threw, or nil (a test then fails on the nil).
func clinicError(_ body: () async throws -> Void) async -> ClinicError? {
    do {
        try await body()
        return nil
    } catch {
        return clinicError(in: error)
    }
}

func clinicError(_ body: () throws -> Void) -> ClinicError? {
    do {
        try body()
        return nil
    } catch {
        return clinicError(in: error)
    }
}

/// A thrown error as the ClinicError it should be; anything else is recorded as an issue.
private func clinicError(in error: any Error) -> ClinicError? {
    if let error = error as? ClinicError { return error }
    Issue.record("not a ClinicError: \(error)")
    return nil
}
