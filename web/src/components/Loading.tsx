// The page-sized spinner shown while a page or the session loads.
import { Center, Loader } from '@mantine/core';

export function Loading() {
  return (
    <Center h="60vh" aria-busy="true">
      <Loader aria-label="Loading" />
    </Center>
  );
}
