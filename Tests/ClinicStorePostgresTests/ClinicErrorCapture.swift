import ClinicKit
import Testing

/// The ClinicError `body` threw, or nil (a test then fails on the nil).
func clinicError(_ body: () async throws -> Void) async -> ClinicError? {
    do {
        try await body()
        return nil
    } catch let error as ClinicError {
        return error
    } catch {
        Issue.record("not a ClinicError: \(error)")
        return nil
    }
}

func clinicError(_ body: () throws -> Void) -> ClinicError? {
    do {
        try body()
        return nil
    } catch let error as ClinicError {
        return error
    } catch {
        Issue.record("not a ClinicError: \(error)")
        return nil
    }
}
