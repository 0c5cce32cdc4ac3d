import { Text } from '@mantine/core';
import { UNTESTED_TEXT } from './data';

/** The provider_untested text in the body colour: the yellow alert's own text colour is below 4.5:1 on its tint. */
export function Warning() {
  return (
    <Text size="sm" c="dark.9">
      {UNTESTED_TEXT}
    </Text>
  );
}
