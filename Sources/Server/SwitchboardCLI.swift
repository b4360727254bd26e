#if canImport(Glibc)
import Glibc
#endif
public enum SwitchboardCLI {
    public static func main(_ args: [String]) -> Int32 { 0 }
}
