// A Hus bot that plays a random legal move (Java 17, standard library only, one file).
//
// Build and run (compile output goes to a directory of your choice):
//     javac -d /tmp/hus-java sample-bots/java/RandomBot.java
//     java -cp /tmp/hus-java RandomBot [SEED]
//
// Protocol v1 in brief (sample-bots/python/random_bot.py explains it at length):
//   * one JSON object per line on stdin from the referee, one per line on stdout back;
//   * stdout is for protocol lines only: debug output goes to System.err;
//   * "hello" -> answer {"type":"ready","name":...};
//     "turn"  -> answer {"type":"move","pit":N}, N one of the "legal" pits;
//     "game", "result" and unknown types -> no answer;
//     "bye"   -> exit. Exit on end of input too.
//
// There is no JSON library in the JDK, and this bot needs only two fields: "type" (a
// string) and "legal" (an array of integers). Rather than search the line for the text
// "legal" -- which could match inside some other string, or a key of a nested object --
// TopLevel below walks the line as JSON, one top-level member at a time:
//   * it expects the line to be one JSON object (the referee sends nothing else;
//     a line that is not is logged to stderr and ignored);
//   * keys are JSON strings, read with their escapes, so a key is recognised only when
//     it really is a top-level key, and whitespace is allowed around ':' and ',';
//   * values it does not need are skipped structurally: strings (with escapes, so a
//     '"', '[' or '}' inside a string never confuses it), nested objects and arrays (by
//     matching brackets, skipping strings inside them), and numbers/true/false/null;
//   * "type" is decoded as a string (any other kind of value counts as no type);
//     "legal" must be an array of plain non-negative integers, which is what the
//     referee sends for pit numbers; anything else counts as no legal moves.
// It is not a validating parser: some malformed lines may be accepted. That is fine
// for reading a referee that only writes well-formed JSON, and it never reads a field
// from inside a string or a nested value by mistake.

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

public final class RandomBot {
    private static final String BOT_NAME = "java-random";

    // Our own stream with autoflush off and "\n" line ends on every platform
    // (println would write "\r\n" on Windows); send() flushes each line.
    private static final PrintStream OUT =
            new PrintStream(System.out, false, StandardCharsets.UTF_8);

    private static void log(String text) {
        System.err.println("[" + BOT_NAME + "] " + text);
    }

    private static void send(String jsonLine) {
        OUT.print(jsonLine);
        OUT.print('\n');
        OUT.flush(); // without it the referee may wait for a line sitting in our buffer
    }

    // The one method to rewrite: return one of the legal pits. (The full turn message
    // also has "you" and "opponent", each side's 2*W pits in its own numbering; read
    // them the way readLegal reads "legal" if you need them.)
    private static int chooseMove(List<Integer> legal, Random random) {
        return legal.get(random.nextInt(legal.size()));
    }

    public static void main(String[] args) throws IOException {
        Random random = args.length > 0 ? new Random(Long.parseLong(args[0])) : new Random();
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) { // null: end of input, so we exit
            line = line.strip();
            if (line.isEmpty()) {
                continue; // blank lines mean nothing
            }
            TopLevel message;
            try {
                message = new TopLevel(line);
            } catch (IllegalArgumentException e) {
                log("ignoring a line I cannot read (" + e.getMessage() + "): "
                        + line.substring(0, Math.min(200, line.length())));
                continue;
            }
            String type = message.type == null ? "" : message.type;
            switch (type) {
                case "hello":
                    send("{\"type\":\"ready\",\"name\":\"" + BOT_NAME + "\"}");
                    break;
                case "turn":
                    if (message.legal == null || message.legal.isEmpty()) {
                        log("turn without legal moves?");
                    } else {
                        send("{\"type\":\"move\",\"pit\":" + chooseMove(message.legal, random) + "}");
                    }
                    break;
                case "bye":
                    return; // the set is over
                default:
                    break; // "game", "result" and unknown types need no answer
            }
        }
    }

    /** The "type" and "legal" members of a one-line JSON object, read as described above. */
    static final class TopLevel {
        String type; // null if absent or not a string
        List<Integer> legal; // null if absent or not an array of non-negative integers

        private final String s;
        private int i;

        TopLevel(String line) {
            s = line;
            i = 0;
            skipSpace();
            expect('{');
            skipSpace();
            if (peek() == '}') {
                return;
            }
            while (true) {
                skipSpace();
                String key = readString();
                skipSpace();
                expect(':');
                skipSpace();
                if (key.equals("type") && peek() == '"') {
                    type = readString();
                } else if (key.equals("legal") && peek() == '[') {
                    legal = readIntArray();
                } else {
                    if (key.equals("type")) {
                        type = null; // a later duplicate key wins, as in most parsers
                    } else if (key.equals("legal")) {
                        legal = null;
                    }
                    skipValue();
                }
                skipSpace();
                char c = next();
                if (c == '}') {
                    return;
                }
                if (c != ',') {
                    throw new IllegalArgumentException("expected ',' or '}' at " + (i - 1));
                }
            }
        }

        private char peek() {
            if (i >= s.length()) {
                throw new IllegalArgumentException("line ends too early");
            }
            return s.charAt(i);
        }

        private char next() {
            char c = peek();
            i++;
            return c;
        }

        private void expect(char c) {
            if (next() != c) {
                throw new IllegalArgumentException("expected '" + c + "' at " + (i - 1));
            }
        }

        private void skipSpace() {
            while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
        }

        /** A JSON string starting at '"', escapes decoded. */
        private String readString() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                char c = next();
                if (c == '"') {
                    return out.toString();
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char e = next();
                switch (e) {
                    case '"': case '\\': case '/': out.append(e); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'n': out.append('\n'); break;
                    case 'r': out.append('\r'); break;
                    case 't': out.append('\t'); break;
                    case 'u':
                        if (i + 4 > s.length()) {
                            throw new IllegalArgumentException("short \\u escape");
                        }
                        try {
                            out.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        } catch (NumberFormatException ex) {
                            throw new IllegalArgumentException("bad \\u escape");
                        }
                        i += 4;
                        break;
                    default:
                        throw new IllegalArgumentException("bad escape \\" + e);
                }
            }
        }

        /** "[1, 2,3]": null unless every element is a plain non-negative integer. */
        private List<Integer> readIntArray() {
            int start = i;
            expect('[');
            List<Integer> out = new ArrayList<>();
            skipSpace();
            if (peek() == ']') {
                i++;
                return out;
            }
            while (true) {
                skipSpace();
                int from = i;
                while (i < s.length() && Character.isDigit(s.charAt(i)) && s.charAt(i) < 128) {
                    i++;
                }
                if (i == from || i - from > 9) { // not a pit number: give up on "legal"
                    i = start;
                    skipValue();
                    return null;
                }
                out.add(Integer.parseInt(s.substring(from, i)));
                skipSpace();
                char c = peek();
                if (c == ']') {
                    i++;
                    return out;
                }
                if (c != ',') {
                    i = start;
                    skipValue();
                    return null;
                }
                i++;
            }
        }

        /** Skip one JSON value of any kind. */
        private void skipValue() {
            char c = peek();
            if (c == '"') {
                readString();
            } else if (c == '{' || c == '[') {
                // Count brackets, stepping over strings so brackets inside them do not count.
                int depth = 0;
                do {
                    c = peek();
                    if (c == '"') {
                        readString();
                        continue;
                    }
                    if (c == '{' || c == '[') {
                        depth++;
                    } else if (c == '}' || c == ']') {
                        depth--;
                    }
                    i++;
                } while (depth > 0);
            } else {
                // A number, true, false or null: runs until a delimiter.
                int from = i;
                while (i < s.length() && ",}] \t\r\n".indexOf(s.charAt(i)) < 0) {
                    i++;
                }
                if (i == from) {
                    throw new IllegalArgumentException("expected a value at " + i);
                }
            }
        }
    }
}
