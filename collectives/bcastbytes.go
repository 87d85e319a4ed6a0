package collectives

import "fmt"

// maxBcastBytes bounds what BcastBytes accepts (a checkpoint of a model
// with 4 G parameters is 64 GiB; nothing it carries comes near).
const maxBcastBytes = 1 << 40

// BcastBytes sends root's data (and root's error, if any) to every rank: on
// success every rank returns root's bytes; if root failed every rank returns
// an error carrying root's message. It is collective.
func BcastBytes(c *Comm, root int, data []byte, rootErr error) ([]byte, error) {
	// head: [status, length]; status 1 = root failed and data is the message.
	head := []int64{0, int64(len(data))}
	if c.Rank() == root && rootErr != nil {
		data = []byte(rootErr.Error())
		head = []int64{1, int64(len(data))}
	}
	if err := Bcast(c, head, root); err != nil {
		return nil, fmt.Errorf("broadcast from rank %d: %w", root, err)
	}
	// The header comes from another process: check it before it sizes a
	// buffer (every rank sees the same header, so all of them stop here).
	if (head[0] != 0 && head[0] != 1) || head[1] < 0 || head[1] > maxBcastBytes {
		return nil, fmt.Errorf("broadcast from rank %d: malformed header %v", root, head)
	}
	if c.Rank() != root {
		data = make([]byte, head[1])
	}
	if err := Bcast(c, data, root); err != nil {
		return nil, fmt.Errorf("broadcast from rank %d: %w", root, err)
	}
	if head[0] != 0 {
		// Every rank holds the root's error now: a job failure the
		// command can report once (JobFailure).
		if c.Rank() == root {
			return nil, Failed(rootErr, root, string(data))
		}
		return nil, Failed(fmt.Errorf("rank %d: %s", root, data), root, string(data))
	}
	return data, nil
}
